#!/usr/bin/env bash
# The installed bash completion completes the options the programs' --help lists.
#   completion_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1
export PATH=$2:$PATH
source "$src/completion/ytf-submit"
source "$src/completion/ytf"

complete_line() {  # the words of a command line; prints the candidates for the last one
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  case $1 in
    ytf-submit) _ytf_submit ;;
    ytf) _ytf ;;
  esac
  printf '%s\n' "${COMPREPLY[@]}"
}

fail() { echo "completion_test: $*" >&2; exit 1; }
[[ $(complete_line ytf-submit --max_a) == --max_attempts ]] || fail "ytf-submit --max_a"
[[ $(complete_line ytf-submit --excl) == --exclude_nodes ]] || fail "ytf-submit --excl"
[[ $(complete_line ytf-submit -r ps:1 --framework py) == pytorch ]] || fail "--framework py"
[[ $(complete_line ytf lo) == logs ]] || fail "ytf lo"
[[ $(complete_line ytf logs --fol) == --follow ]] || fail "ytf logs --fol"
[[ $(complete_line ytf list --js) == --json ]] || fail "ytf list --js"
[[ -z $(complete_line ytf kill --js) ]] || fail "ytf kill has no --json"
[[ $(complete_line ytf ev) == events ]] || fail "ytf ev"
[[ $(complete_line ytf sc) == scale ]] || fail "ytf sc"
[[ $(complete_line ytf scale --ti) == --timeout ]] || fail "ytf scale --ti"
[[ $(complete_line ytf events --js) == --json ]] || fail "ytf events --js"
[[ $(complete_line ytf res) == resume ]] || fail "ytf res"
[[ $(complete_line ytf su) == suspend ]] || fail "ytf su"
[[ $(complete_line ytf suspend --wa) == --wait ]] || fail "ytf suspend --wa"
[[ $(complete_line ytf history-server --sc) == --scan_interval ]] || fail "ytf history-server --sc"
[[ $(complete_line ytf history --sta) == --state ]] || fail "ytf history --sta"
[[ $(complete_line ytf history-) == history-server ]] || fail "ytf history-"
echo "completion_test: ok"
