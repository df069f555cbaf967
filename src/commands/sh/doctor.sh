# `mlt ssh doctor`: what this host offers a train, one fact a line, "KEY<TAB>VALUE..." (read by
# parse_doctor_facts, src/commands/doctor_judge.cpp; a key may come more than once). It only
# reads, but for a small file it writes and removes in the remote dir to see that it can.
# Inputs: mlt_dir (the remote dir, as train would make it: it may not exist yet).
mlt_fact() {
  mlt_k=$1; shift
  printf '%s' "$mlt_k"; for mlt_v in "$@"; do printf '\t%s' "$mlt_v"; done; printf '\n'
}
# A command that may hang on a sick host (nvidia-smi with a wedged driver) gets 10 s.
mlt_bounded() {
  if command -v timeout >/dev/null 2>&1; then timeout 10 "$@"; else "$@"; fi
}
mlt_fact home "$HOME"
mlt_user=$(id -un 2>/dev/null)
mlt_shell=$(awk -F: -v u="$mlt_user" '$1 == u { print $7; exit }' /etc/passwd 2>/dev/null)
[ -n "$mlt_shell" ] || mlt_shell=$SHELL
mlt_fact shell "$mlt_shell"
# The files the login shell reads for every command sshd runs (a non-interactive shell, not a
# login one): bash those of SSH_SOURCE_BASHRC (Debian's and Red Hat's builds) and BASH_ENV,
# zsh its zshenv files. Other shells read none.
case ${mlt_shell##*/} in
  bash) set -- "$HOME/.bashrc" /etc/bash.bashrc /etc/bashrc ${BASH_ENV:+"$BASH_ENV"} ;;
  zsh) set -- "$HOME/.zshenv" /etc/zsh/zshenv /etc/zshenv ;;
  *) set -- ;;
esac
for mlt_f in "$@"; do [ ! -f "$mlt_f" ] || mlt_fact startup "$mlt_f"; done
for mlt_t in sh tar sha256sum flock awk setsid python3 curl wget nvidia-smi; do
  mlt_fact tool "$mlt_t" "$(command -v "$mlt_t" 2>/dev/null)"
done
# The training (and its venv) runs under `bash --login`, whose profile may put python3 on the
# PATH (pyenv, conda in ~/.profile): where the commands' PATH has none, that one is asked.
mlt_python=python3
if ! command -v python3 >/dev/null 2>&1; then
  mlt_python=
  if command -v bash >/dev/null 2>&1; then
    mlt_python=$(mlt_bounded bash --login -c 'command -v python3' < /dev/null 2>/dev/null | tail -n 1)
    [ -z "$mlt_python" ] || mlt_fact login_python "$mlt_python"
  fi
fi
if [ -n "$mlt_python" ]; then
  # Debian's python3 imports venv without python3-venv, but has no ensurepip then, and
  # `python3 -m venv` fails: both are asked for.
  mlt_py=$("$mlt_python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3]); sys.stdout.flush(); import venv, ensurepip' 2>/dev/null)
  mlt_fact python "$?" "$mlt_py"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
  mlt_out=$(mlt_bounded nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,nounits 2>&1)
  mlt_fact gpu_status "$?"
  printf '%s\n' "$mlt_out" | while IFS= read -r mlt_l; do [ -z "$mlt_l" ] || mlt_fact gpu "$mlt_l"; done
  mlt_fact cuda "$(mlt_bounded nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)"
fi
# The remote dir, or the nearest dir above it that exists (train makes the rest).
mlt_d=$mlt_dir
while [ ! -d "$mlt_d" ]; do mlt_d=$(dirname "$mlt_d"); done
mlt_fact disk_dir "$mlt_d" "$(cd "$mlt_d" 2>/dev/null && pwd)"
df -Pk "$mlt_d" 2>/dev/null | awk 'NR == 2 { printf "disk\t%s\t%s\n", $2, $4 }'
mlt_f="$mlt_d/.mlt-doctor-$$"
# A write that finds no room leaves the file empty, whether or not the shell's printf says so.
if { printf 'mlt doctor\n' > "$mlt_f"; } 2>/dev/null && [ -s "$mlt_f" ]; then mlt_fact writable yes; else mlt_fact writable no; fi
rm -f "$mlt_f"
