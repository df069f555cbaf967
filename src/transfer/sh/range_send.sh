# Down: the ranges of one remote command of a download (send_ranges_command in
# range_commands.cpp), after hash_setup.sh.
# Inputs: t (a marker line printed first: what a login profile printed before it is not
# data), f (the file), b (the block: kRangeBlock), rs (the ranges, "INDEX:BLOCK:LEN" each,
# separated by spaces).
# Each range's bytes go to stdout, exactly LEN of them (a file that shrank is padded with
# zeros: its hash then differs), then its sha256, read from the file once more, as
# "INDEX SHA256" on stderr. One dd reading whole blocks copies a range once (`tail -c +OFF |
# head -c LEN` copied it twice in 8 KiB pieces, twice the remote's CPU).
printf '%s\n' "$t"
case $f in /*) ;; *) f="./$f" ;; esac
mlt_read() { dd if="$f" bs="$b" skip="$k" count=$(((n + b - 1) / b)) 2>/dev/null; }
for r in $rs; do
  i=${r%%:*}
  r=${r#*:}
  k=${r%%:*}
  n=${r#*:}
  { mlt_read; head -c "$n" /dev/zero; } | head -c "$n"
  h=$(mlt_read | head -c "$n" | $hash_cmd) || exit 1
  echo "$i ${h%% *}" >&2
done
