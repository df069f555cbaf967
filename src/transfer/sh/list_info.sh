# The regular files under the remote dir $B with what mlt compares them by
# (list_remote_file_info in remote_list.cpp): first the remote clock as a record of its own,
# "@SECONDS.NANOS" (a date without %N: "@SECONDS.N" or so, read as the second), then a
# record per file, "r|u SIZE MTIME CTIME INODE ./PATH" (r: readable), each NUL-terminated.
# The path is last, so spaces in it are harmless. A missing dir lists nothing.
F='r %s %T@ %C@ %i %p\0' G='u %s %T@ %C@ %i %p\0'
[ -d "$B" ] || exit 0
cd -- "$B" && printf '@%s\0' "$(date +%s.%N)" && LC_ALL=C find . -type f \( -readable -printf "$F" -o -printf "$G" \)
