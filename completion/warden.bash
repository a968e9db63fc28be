# bash completion for warden (installed as
# PREFIX/share/bash-completion/completions/warden).  Self-contained: it
# needs none of bash-completion's helpers.  Profile names come from
# `warden policy list`, so user profiles are completed too.

_warden_profiles()
{
	"${COMP_WORDS[0]}" policy list 2>/dev/null | awk 'NR > 1 { print $1 }'
}

# The saved conversations, newest first: the names `--resume` takes, from
# where `warden chat` saves them ($XDG_DATA_HOME when it is absolute).
_warden_conversations()
{
	local d=$HOME/.local/share/warden/conversations
	[[ $XDG_DATA_HOME == /* ]] && d=$XDG_DATA_HOME/warden/conversations
	[ -d "$d" ] && (cd "$d" && ls -t -- *.json 2>/dev/null)
}

_warden()
{
	local cur prev cmd i opts
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		run|chat|serve|mcp|policy|audit|doctor|version|help) cmd=${COMP_WORDS[i]}; break ;;
		--) return 0 ;;
		esac
	done

	# options that take a value
	case $prev in
	--profile|--sandbox-profile|--allow-profile)
		if [ "$cmd" = chat ] && [ "$prev" = --profile ]; then
			return 0    # a chat profile of config.json
		fi
		COMPREPLY=($(compgen -W "$(_warden_profiles)" -- "$cur"))
		return 0 ;;
	--policy|--audit-log|--json|--export-script)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	--resume)
		if [[ $cur == */* ]]; then
			COMPREPLY=($(compgen -f -- "$cur"))    # a path: a file
		else
			local IFS=$'\n'
			COMPREPLY=($(compgen -W "$(_warden_conversations)" -- "$cur"))
		fi
		return 0 ;;
	--workspace|--allow-workspace)
		COMPREPLY=($(compgen -d -- "$cur"))
		return 0 ;;
	--net)
		COMPREPLY=($(compgen -W "none loopback proxy" -- "$cur"))
		return 0 ;;
	--broker-user)
		COMPREPLY=($(compgen -u -- "$cur"))
		return 0 ;;
	-m|--model|--api-base|--api-key|--memory|--pids|--cpus|--timeout|--cpu-time|\
	--output|--env|--max-output|--context-window|--max-tokens|--temperature|\
	--system-message|--system-message-append|--connect-timeout|--idle-timeout|--session|--allow|\
	--last|--since)
		return 0 ;;
	esac

	case $cmd in
	"")	# chat is the default command: `warden -y MESSAGE`
		if [[ $cur == -* ]]; then
			cmd=chat
		else
			COMPREPLY=($(compgen -W "chat serve mcp run policy audit doctor version help" -- "$cur"))
			return 0
		fi ;;
	esac
	case $cmd in
	run)
		opts="--profile --policy --workspace --memory --pids --cpus --timeout --cpu-time
		      --output --net --allow --env --audit-log --json --no-stdin --quiet --raw --help --"
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi ;;
	chat)
		opts="--model --api-base --api-key --auto-run --profile --sandbox-profile --no-tools
		      --max-output --context-window --max-tokens --temperature --resume --export-script --jupyter
		      --system-message --system-message-append --conversations
		      --verbose --connect-timeout --idle-timeout --oneshot --help
		      --workspace --allow-profile --net --allow --audit-log --version -m -y -v -h"
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
	serve)
		opts="--stdio --profile --policy --allow-profile --workspace --allow-workspace
		      --net --allow --audit-log --broker-user --max-sessions --pool --pool-idle --help"
		COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
	mcp)
		opts="--profile --policy --allow-profile --workspace --allow-workspace
		      --net --allow --audit-log --broker-user --max-sessions --pool --pool-idle --help"
		COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
	policy)
		if [ "$COMP_CWORD" -eq $((i + 1)) ]; then
			COMPREPLY=($(compgen -W "check show list --help" -- "$cur"))
		else
			case ${COMP_WORDS[i+1]} in
			check) COMPREPLY=($(compgen -W "$(_warden_profiles) --workspace" -- "$cur") $(compgen -f -- "$cur")) ;;
			show)  COMPREPLY=($(compgen -W "$(_warden_profiles)" -- "$cur") $(compgen -f -X '!*.json' -- "$cur")) ;;
			esac
		fi ;;
	audit)
		COMPREPLY=($(compgen -W "--last --since --all --session --denied --json --no-pager
		                         --audit-log --help" -- "$cur")) ;;
	doctor)
		COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
	esac
	return 0
}
complete -F _warden warden
