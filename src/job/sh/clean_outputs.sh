# --clean on the remote (clean_outputs in clean.cpp), after enter.sh (in the remote dir): removes the
# model archive mlt_archive and, when mlt_logd is not empty, that log dir (a path of the settings).
# The log dir is checked where the truth is: never the remote dir or one above it, the home
# directory, /, or a dir that holds job state (.mlt); a refusal says so and exits 1.
rm -f -- "$mlt_archive" || exit 1
{ [ -n "$mlt_logd" ] && [ -d "$mlt_logd" ]; } || exit 0
a=$(cd -- "$mlt_logd" && pwd -P) && w=$(pwd -P) && h=$(cd && pwd -P) || a=
case "$w/" in "$a"/*) a= ;; esac
if [ -z "$a" ] || [ "$a" = / ] || [ "$a" = "$h" ] || [ -e "$mlt_logd/.mlt" ]; then
  echo "refusing to remove $mlt_logd: it holds more than this model's logs" >&2
  exit 1
fi
rm -rf -- "$mlt_logd"
