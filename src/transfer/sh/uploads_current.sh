# True when the remote copies of the files to upload are current: the records of the named
# files, "SIZE MTIME ./NAME" each (find's -printf $F), hash to $w, as the local files' do
# (uploads_current_test in incremental.cpp). Run in a subshell of its own.
# Inputs: F (the record format: kFindRecord), w (the local records' sha256), s (the text of
# find_named.sh), and the positional parameters: for each remote base, the base and its
# names (each ./name followed by a NUL, written for `printf %b`).
G=$F
export F G
[ "$(while [ $# -gt 0 ]; do
  (cd -- "$1" 2>/dev/null && printf '%b' "$2" | xargs -0 -r sh -c "$s" sh)
  shift 2
done | sha256sum 2>/dev/null | cut -c 1-64)" = "$w" ]
