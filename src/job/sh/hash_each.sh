# The hashing of the download_files record (record_downloads.sh; run by sh -c): hashes the files
# named after its first two words and prints a record for each (docs/remote-protocol.md): k is "f"
# for a glob's files, "p" for the files under a pair's directory, "P" for a pair's file (recorded
# without a name); i is the pair's index.
k=$1 i=$2; shift 2
for f; do
  h=$(sha256sum < "$f" 2>/dev/null | cut -c1-64)
  [ "${#h}" -eq 64 ] || continue
  r=${f#./}; [ "$k" != P ] || r=
  if [ "$k" = f ]; then printf 'f %s %s\0' "$h" "$r"; else printf 'p %s %s %s\0' "$i" "$h" "$r"; fi
done
