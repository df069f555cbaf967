# The remote side of an upload's tar stream (upload_streams in tar_upload.cpp).
# Inputs: B (the remote base, created), Z (tar's compression option, or empty).
# tar's stderr goes to a temporary file and only its tail (64 KiB) is printed at the end: a
# tar that warns once per file (disk full, clock skew) can say megabytes, all of which would
# be collected for an error that quotes its last lines. (This dates from when exec channels
# sent all of stdin before reading any output, when a full stderr could also block tar.)
# When the base cannot be created the input is drained, so the exit status and message
# arrive rather than a cut-off stream.
if mkdir -p -- "$B" && cd -- "$B"; then
  e=$(mktemp 2>/dev/null) || e=/dev/null
  tar -xf - ${Z:+"$Z"} --no-same-owner --warning=no-timestamp --warning=no-unknown-keyword 2>"$e"
  s=$?
  if [ "$e" != /dev/null ]; then tail -c 65536 "$e" >&2; rm -f "$e"; fi
  exit $s
else
  s=$?
  cat >/dev/null
  exit $s
fi
