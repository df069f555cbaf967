# The venv of the job's batch (create_venv), under `set -e`: it is complete only once its packages
# installed, the marker written last, so a venv whose pip failed (a network hiccup) gets its
# packages again on the next run instead of failing with `command not found` on every run after.
# Inputs: mlt_packages, and mlt_fallback_packages tried with --upgrade when those fail (one per
# line; empty: none).
mlt_venv="$MLT_REMOTE_DIR/.venv"
# mlt_pip LIST [OPTION...]: pip install OPTIONs and the packages of LIST.
mlt_pip() {
  mlt_list=$1; shift
  while IFS= read -r mlt_p; do [ -z "$mlt_p" ] || set -- "$@" "$mlt_p"; done <<MLT_LIST
$mlt_list
MLT_LIST
  "$mlt_venv/bin/pip" install "$@"
}
if [ ! -f "$mlt_venv/.mlt_complete" ]; then
  if [ ! -f "$mlt_venv/bin/activate" ]; then
    echo 'mlt: creating .venv'
    python3 -m venv "$mlt_venv"
  else
    echo 'mlt: .venv was not completed (no .mlt_complete): installing its packages again'
  fi
  if [ -z "$mlt_packages" ]; then :
  elif [ -z "$mlt_fallback_packages" ]; then mlt_pip "$mlt_packages"
  else mlt_pip "$mlt_packages" || mlt_pip "$mlt_fallback_packages" --upgrade; fi
  : > "$mlt_venv/.mlt_complete"
fi
# (`command .`: the file is the remote's, which shellcheck cannot follow.)
command . "$mlt_venv/bin/activate"
