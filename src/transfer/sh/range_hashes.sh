# The sha256 of ranges of a remote file, up to 8 at a time (remote_range_hashes in
# range_commands.cpp), after hash_setup.sh.
# Inputs: f (the file), b (the block: kRangeBlock), s (the text of range_hash.sh, the program
# each range runs); the ranges on stdin, "INDEX:BLOCK:LEN" a line.
# Prints "INDEX SHA256" for each range it could read.
case $f in /*) ;; *) f="./$f" ;; esac
export b
xargs -P 8 -n 1 sh -c "$s" "$f"
