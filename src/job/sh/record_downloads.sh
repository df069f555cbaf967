# mlt_record_downloads: the download_files record (JobPaths::downloads), written whole or not at
# all. The globs are find regexes (one per line of $mlt_dl_globs); each pair's remote side (one per
# line of $mlt_dl_pairs) is expanded as the collection expands it, recorded ("x I PATH"), and
# hashed: the file, or every file under the directory.
mlt_record_downloads() {
  (cd "$mlt_dir" || exit 0
  mlt_m="$mlt_job/download_files"
  {
    printf 'r %s\0' "$mlt_run"
    if [ -n "$mlt_dl_globs" ]; then
      set -- -false
      while IFS= read -r mlt_g; do set -- "$@" -o -regex "$mlt_g"; done <<MLT_GLOBS
$mlt_dl_globs
MLT_GLOBS
      LC_ALL=C find . -regextype posix-extended -type f \( "$@" \) \
        -exec sh -c "$mlt_hash_each" sh f 0 {} +
    fi
    mlt_i=0
    [ -z "$mlt_dl_pairs" ] || while IFS= read -r mlt_f; do
      mlt_e=$(P=$mlt_f; export P; eval "$mlt_expand")
      case $mlt_e in \~) mlt_e=$HOME ;; \~/*) mlt_e=$HOME/${mlt_e#\~/} ;; esac
      printf 'x %s %s\0' "$mlt_i" "$mlt_e"
      if [ -d "$mlt_e" ]; then
        (cd "$mlt_e" && find . -type f -exec sh -c "$mlt_hash_each" sh p "$mlt_i" {} +)
      elif [ -f "$mlt_e" ]; then
        sh -c "$mlt_hash_each" sh P "$mlt_i" "$mlt_e"
      fi
      mlt_i=$((mlt_i + 1))
    done <<MLT_PAIRS
$mlt_dl_pairs
MLT_PAIRS
  } > "$mlt_m.tmp" 2>/dev/null && mv -f "$mlt_m.tmp" "$mlt_m")
}
