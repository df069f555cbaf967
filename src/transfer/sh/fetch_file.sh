# One remote file in one round trip, resumed at an offset (fetch_command in
# file_download.cpp).
# Inputs: f (the file: a relative one gets ./, so that find cannot take it for an option),
# o (the bytes the local copy holds already), l (1: a symlink counts as the file it points
# to, as for cat; empty: it is not read at all), and the exit statuses mlt_st_missing (no
# such regular file), mlt_st_symlink and mlt_st_dir (the C++ constants).
# Prints "SIZE MTIME" (GNU find), then the file from byte o+1 when o is within it, else all
# of it, never more than SIZE bytes in all (a file still growing is cut there).
case $f in /*) ;; *) f="./$f" ;; esac
[ -n "$l" ] || [ ! -L "$f" ] || exit "$mlt_st_symlink"
i=$(find ${l:+-L} "$f" -maxdepth 0 -type f -printf '%s %T@' 2>/dev/null)
[ -n "$i" ] || { [ -d "$f" ] && exit "$mlt_st_dir"; echo "no such regular file: $f" >&2; exit "$mlt_st_missing"; }
echo "$i"
s=${i%% *}
if [ "$o" -gt 0 ] && [ "$o" -le "$s" ]; then
  tail -c +$((o + 1)) -- "$f" | head -c $((s - o))
else
  head -c "$s" -- "$f"
fi
