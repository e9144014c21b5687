package chunk

// gear is FastCDC's rolling-hash table: 256 pseudo-random 64-bit values, the
// first 256 outputs of SplitMix64 seeded with gearSeed. It is part of the
// on-disk format: changing it moves every chunk boundary and breaks dedup
// with every stored file (TestFormatIsPinned guards it).
var gear = makeGear()

// gearSeed is "forkspac" in ASCII, big-endian.
const gearSeed = 0x666f726b73706163

func makeGear() (g [256]uint64) {
	state := uint64(gearSeed)
	for i := range g {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		g[i] = z ^ (z >> 31)
	}
	return g
}
