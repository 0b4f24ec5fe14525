#!/bin/bash
# The bash completion for airlockctl, with bash-completion's helpers stubbed and a fake
# airlockctl that answers `list --json`: commands, options, and sandbox names.
# Usage: check-completion.sh COMPLETION_FILE
set -uo pipefail
completion=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/airlockctl" <<'FAKE'
#!/bin/bash
args="$*"
echo "$args" >>"${0%/*}/calls"
case "$args" in
*"list --json"*) echo '[{"name":"demo","state":"running"},{"name": "agent-2","state":"stopped"}]' ;;
*) exit 1 ;;
esac
FAKE
chmod +x "$work/airlockctl"
PATH="$work:$PATH"

# Minimal stand-ins for bash-completion's helpers.
_init_completion() {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
}
_filedir() { COMPREPLY=(FILES); }
# shellcheck disable=SC1090
source "$completion" || { echo "FAIL: cannot source $completion" >&2; exit 1; }

failures=0
expect() { # expect "WANT" word...
    local want=$1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _airlockctl
    local got="${COMPREPLY[*]}"
    if [[ "$got" != "$want" ]]; then
        echo "FAIL: '$*' completes to '$got', want '$want'" >&2
        failures=$((failures + 1))
    else
        echo "ok: '$*' -> '$got'"
    fi
}
expect "create list info start stop kill rm images console exec cp workspace bridge policy egress secret binding pause resume snapshot template" airlockctl ""
expect "start stop" airlockctl st
expect "--host --identity --known-hosts --ssh-config --remote-airlockctl --socket --json --help --version" airlockctl -
expect "FILES" airlockctl --socket ""
expect "FILES" airlockctl --identity ""
expect "--vcpus --memory --image --cold-boot --vmm --json --socket --help" airlockctl create demo -
expect "--json --socket --help" airlockctl list --
expect "--timeout --json --socket --help" airlockctl stop demo --
expect "demo agent-2" airlockctl start ""
expect "agent-2" airlockctl --socket /tmp/s.sock console a
expect "" airlockctl start demo ""
expect "" airlockctl create ""
expect "demo agent-2" airlockctl stop --timeout 5 ""
expect "demo agent-2" airlockctl exec ""
expect "demo agent-2" airlockctl exec --env A=1 ""
expect "" airlockctl exec demo ""
expect "--env --cwd --user --timeout --interactive --tty --json --socket --help" airlockctl exec demo -
expect "FILES demo:/" airlockctl cp d
expect "" airlockctl cp demo:/etc
expect "push pull diff" airlockctl workspace ""
expect "push pull" airlockctl workspace pu
expect "demo agent-2" airlockctl workspace diff ""
expect "--user --json --socket --help" airlockctl workspace push demo -
expect "get set validate history" airlockctl policy ""
expect "demo agent-2" airlockctl policy history ""
expect "validate" airlockctl policy v
expect "demo agent-2" airlockctl policy get ""
expect "demo" airlockctl policy set d
expect "FILES" airlockctl policy set demo ""
expect "FILES" airlockctl policy validate ""
expect "" airlockctl policy get demo ""
expect "demo agent-2" airlockctl egress ""
expect "--follow --limit --json --socket --help" airlockctl egress demo --
expect "demo agent-2" airlockctl egress --limit 5 ""
expect "create ls restore fork rm pin unpin rename schedule" airlockctl snapshot ""
expect "demo agent-2" airlockctl snapshot restore ""
expect "demo agent-2" airlockctl pause ""
expect "set ls rm" airlockctl secret ""
expect "" airlockctl secret set ""
expect "add ls rm" airlockctl binding ""
expect "demo agent-2" airlockctl binding add ""
expect "" airlockctl binding add demo ""
expect "agent-2" airlockctl binding ls a
expect "demo agent-2" airlockctl binding add --path /v1 ""
expect "--path --method --header --template --basic --json --socket --help" airlockctl binding add demo k h -
grep -q -- '--socket /tmp/s.sock list --json' "$work/calls" \
    || { echo "FAIL: --socket not passed to airlockctl list" >&2; failures=$((failures + 1)); }
exit $((failures > 0))
