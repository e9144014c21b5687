package merge

// Kinds of conflicts: what clashed at a path.
const (
	// Content: both sides changed the same lines of a text file (or
	// lines next to each other).
	Content = "content"
	// Binary: both sides changed a file that is not text.
	Binary = "binary"
	// DeleteModify: one side deleted an entry (or the directory it is
	// in) that the other changed or added to.
	DeleteModify = "delete/modify"
	// DirectoryFile: one side has a directory where the other has a file
	// or symbolic link.
	DirectoryFile = "directory/file"
	// AddAdd: both sides created different entries at the same path.
	AddAdd = "add/add"
	// RenameRename: both sides renamed an entry, to different paths.
	RenameRename = "rename/rename"
	// Mode: both sides changed the permission bits (or owner) differently.
	Mode = "mode"
	// Symlink: both sides changed a symbolic link's target differently.
	Symlink = "symlink"
	// Xattr: both sides changed an extended attribute differently.
	Xattr = "xattr"
)
