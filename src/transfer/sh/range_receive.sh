# Up: the ranges of one remote command of an upload (receive_ranges_command in
# range_commands.cpp), after hash_setup.sh.
# Inputs: p (the partial file), d (its hash dir), b (the block: kRangeBlock).
# Takes ranges from stdin until it ends, each a header line "INDEX:BLOCK:LEN" and its bytes:
# read off exactly (head -c reads no further than it writes) into the partial file at its
# offset; then the sha256 of what landed goes into $d/INDEX.sha and, as "INDEX SHA256", to
# stderr.
while IFS=: read -r i k n; do
  head -c "$n" | dd of="$p" bs="$b" seek="$k" conv=notrunc 2>/dev/null || exit 1
  h=$(dd if="$p" bs="$b" skip="$k" count=$(((n + b - 1) / b)) 2>/dev/null | head -c "$n" | $hash_cmd | cut -c1-64) || exit 1
  echo "$h" > "$d/$i.sha" || exit 1
  echo "$i $h" >&2
done
