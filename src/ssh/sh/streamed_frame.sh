# A control-shell frame whose stdin streams after its text (streamed_frame in
# control_frame.cpp; docs/remote-protocol.md, "Streams through the control shell"). Inputs:
# mlt_k (the frame's token and serial, which starts every chunk header), mlt_go and mlt_nogo
# (the first line it prints), mlt_st (the status without a stream), mlt_cmd (the command).
# The frame is one command line (its end marker follows `)` on the same line), so that a
# shell reading a byte at a time (bash) has read all of it before it runs any of it.
# The data may follow only once mlt_go is out: the shell above has read the frame's text by
# then and nothing else, and the chunks are read here with `read` (a byte at a time) and
# `head -c`, which must read no further than it writes: a head that reads ahead would leave
# the stream out of step, so without one nothing is streamed.
# It fails closed: a header out of step, an end of input before the last chunk, a `head`
# that failed, or a reader that died any other way (it then never says 0) kills the shell
# ($$ is the shell's own pid in a subshell too): no byte of the data is ever read as a
# command. What the command leaves unread is read and dropped (cat).
if [ "$(printf ab | { head -c 1 >/dev/null; cat; })" != b ]; then
  printf '%s\n' "$mlt_nogo"
  exit "$mlt_st"
fi
mlt_chunks() {
  while IFS=' ' read -r mlt_t mlt_n; do
    [ "$mlt_t" = "$mlt_k" ] || { kill -9 $$; exit 1; }
    case $mlt_n in
      0) return 0 ;;
      '' | *[!0-9]*) kill -9 $$; exit 1 ;;
    esac
    head -c "$mlt_n" || { kill -9 $$; exit 1; }
  done
  kill -9 $$
  exit 1
}
printf '%s\n' "$mlt_go"
exec 4>&1
mlt_r=$(
  exec 3>&1
  { mlt_chunks; echo "$?" >&3; } | { (eval "$mlt_cmd") 3>&-; mlt_s=$?; cat >/dev/null; exit "$mlt_s"; } 3>&- >&4
)
mlt_s=$?
[ "$mlt_r" = 0 ] || { kill -9 $$; exit 1; }
exit "$mlt_s"
