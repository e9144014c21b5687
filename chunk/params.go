package chunk

// Params are the content-defined chunking parameters. They are part of the
// on-disk format: a store records the Params it was created with and always
// chunks with them, so identical bytes always split into identical chunks.
type Params struct {
	MinSize int `json:"min_size"`
	AvgSize int `json:"avg_size"`
	MaxSize int `json:"max_size"`
}

// DefaultParams splits files into chunks of about 1 MiB.
var DefaultParams = Params{MinSize: 256 << 10, AvgSize: 1 << 20, MaxSize: 4 << 20}
