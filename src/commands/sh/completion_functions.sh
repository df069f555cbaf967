# The part of mlt's completion scripts that bash and zsh share (`mlt completion`): which
# command the words typed so far chose, and what may come next. What the command definitions
# declare comes from _mlt_words KEY, which mlt writes before this text: KEY is
# "PATH|commands", "PATH|options", "PATH|valued" (the options that take a value),
# "PATH|first" (the words the first argument is one of; @models: a MODEL) or "PATH|OPTION"
# (the words that option's value is one of), PATH being a command such as "mlt ssh train".
# A library of functions: sourced by the completion script, it runs nothing itself.
#
# _mlt_has LIST WORD: true when WORD is one of the words of LIST.
# _mlt_state WORD...: reads the words after `mlt` that come before the one being completed;
#   sets _mlt_path (the command they chose), _mlt_args (how many arguments of that command
#   were given), _mlt_expect (the option whose value comes next, or empty) and _mlt_rest (1
#   after --: every word is an argument). A `=` alone (bash splits --port=1 into three
#   words) is part of the value that follows.
# _mlt_candidates WORD MLT: prints the words that may stand where WORD is being typed, or
#   nothing (the shell then completes file names); MLT is the mlt that lists the models.
_mlt_has() {
  case " $1 " in
  *" $2 "*) return 0 ;;
  esac
  return 1
}
_mlt_state() {
  _mlt_path=mlt
  _mlt_args=0
  _mlt_expect=
  _mlt_rest=
  for _mlt_word in "$@"; do
    if [ -n "$_mlt_expect" ]; then
      [ "$_mlt_word" = = ] || _mlt_expect=
    elif [ -n "$_mlt_rest" ]; then
      _mlt_args=$((_mlt_args + 1))
    else
      case $_mlt_word in
      --) _mlt_rest=1 ;;
      -*=*) ;;
      -*)
        if _mlt_has "$(_mlt_words "$_mlt_path|valued")" "$_mlt_word"; then
          _mlt_expect=$_mlt_word
        fi
        ;;
      *)
        if [ "$_mlt_args" -eq 0 ] &&
          _mlt_has "$(_mlt_words "$_mlt_path|commands")" "$_mlt_word"; then
          _mlt_path="$_mlt_path $_mlt_word"
        else
          _mlt_args=$((_mlt_args + 1))
        fi
        ;;
      esac
    fi
  done
}
_mlt_candidates() {
  if [ -n "$_mlt_expect" ]; then
    _mlt_words "$_mlt_path|$_mlt_expect"
    return 0
  fi
  case $1 in
  -*)
    [ -n "$_mlt_rest" ] || _mlt_words "$_mlt_path|options"
    return 0
    ;;
  esac
  [ "$_mlt_args" -eq 0 ] || return 0
  _mlt_words "$_mlt_path|commands"
  case $(_mlt_words "$_mlt_path|first") in
  @models) "$2" completion --models 2>/dev/null ;;
  *) _mlt_words "$_mlt_path|first" ;;
  esac
}
