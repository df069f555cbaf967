# Up: prepares the partial file of an upload in ranges and lists what an earlier attempt left
# (prepare_ranges_command in range_commands.cpp).
# Inputs: w (the destination's directory, created), p (the partial file: a symlink there is
# removed, never written through), d (its hash dir), id (the upload's size and range size).
# Prints "cores N" first (the cores this command may run on, `nproc`: 0 when not known; the
# logins of new channels share them), then "INDEX SHA256" for each range an earlier attempt
# of the same id left in $d; those of another id go, and the id is written.
mkdir -p -- "$w" && { [ ! -L "$p" ] || rm -f -- "$p"; } && mkdir -p -- "$d" || exit 1
printf 'cores %s\n' "$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)"
if [ "$(cat "$d/id" 2>/dev/null)" = "$id" ]; then
  for h in "$d"/*.sha; do [ -f "$h" ] && n=${h##*/} && echo "${n%.sha} $(cut -c1-64 "$h")"; done
else
  rm -f -- "$d"/*.sha
  printf '%s\n' "$id" > "$d/id"
fi
true
