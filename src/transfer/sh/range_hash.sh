# One range of the file $0, "INDEX:BLOCK:LEN" in $1: prints "INDEX SHA256", with b and
# hash_cmd exported. The program range_hashes.sh runs for each range.
i=${1%%:*}
r=${1#*:}
k=${r%%:*}
n=${r#*:}
h=$(dd if="$0" bs="$b" skip="$k" count=$(((n + b - 1) / b)) 2>/dev/null | head -c "$n" | $hash_cmd) && echo "$i ${h%% *}"
