# The files of the remote dir $B named on stdin (each ./name, NUL-terminated), as
# list_info.sh prints them (stat_remote_files in remote_list.cpp): the clock first, then a
# record per name that is a regular file; a missing one prints nothing.
# Inputs: B, s (the text of find_named.sh). The names are read even without the dir.
F='r %s %T@ %C@ %i %p\0' G='u %s %T@ %C@ %i %p\0'
export F G
cd -- "$B" 2>/dev/null || { cat >/dev/null; exit 0; }
printf '@%s\0' "$(date +%s.%N)"
xargs -0 -r sh -c "$s" sh
