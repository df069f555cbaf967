# Prints P (from the environment) with each $NAME and ${NAME} replaced by that variable's value in
# the environment (one not set stays as written), and nothing else of P expanded: no command
# substitution, no globbing, nothing in it runs as shell code. awk only.
awk 'BEGIN { s = ENVIRON["P"]; o = ""
  while (match(s, /\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)/)) {
    n = substr(s, RSTART + 1, RLENGTH - 1); gsub(/[{}]/, "", n)
    o = o substr(s, 1, RSTART - 1) (n in ENVIRON ? ENVIRON[n] : substr(s, RSTART, RLENGTH))
    s = substr(s, RSTART + RLENGTH) }
  printf "%s", o s }'
