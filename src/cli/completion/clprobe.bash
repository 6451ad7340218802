# bash completion for clprobe (installed as share/bash-completion/completions/clprobe).
#
# Subcommands and each subcommand's options are read from the binary's own --help (once per shell,
# then cached), so they follow the binary being completed; so do the values of --format (the
# report's or the fleet's format table, from `clprobe report --help` or `clprobe fleet --help`)
# and the formats of --save FORMAT=FILE (the report's). The values of --layers and --workloads are
# listed below; tests/cli/test_completion.py checks them against `clprobe diagnose --help`.
# Devices for -d/--device come from `clprobe list --json`; probe ids for --probes and --skip from
# `clprobe list --probes`.

_clprobe_layers="system topology transfer kernel network"
_clprobe_workloads="glm attention none"
_clprobe_device_kinds="gpu cpu accelerator"

declare -gA _clprobe_help_cache

# Option names and which of them take a value, from `PROG [SUB] --help` (CLI11's layout: an
# option line starts with its names, "-d,--device", then the value's type in capitals, if any).
# Prints "NAME v" for an option with a value, "NAME f" for a flag.
_clprobe_options_of() {
    local key="$1 $2"
    if [[ -z ${_clprobe_help_cache[$key]+set} ]]; then
        local names type name kind out=""
        while read -r names type _; do
            [[ $names == -* ]] || continue
            # A value's type is a word in capitals, maybe with its default or range: TEXT,
            # TEXT=a,b, FLOAT:FLOAT; a flag is followed by its description or "Excludes: ...".
            kind=f
            [[ $type =~ ^[A-Z][A-Z0-9_]*([:=].*)?$ ]] && kind=v
            for name in ${names//,/ }; do
                [[ $name == -* ]] && out+="$name $kind"$'\n'
            done
        done < <("$1" $2 --help 2>/dev/null)
        _clprobe_help_cache[$key]=$out
    fi
    printf '%s' "${_clprobe_help_cache[$key]}"
}

# The values of `SUB --format` (report, fleet), from CLI11's "--format TEXT:{text,md,...}" in
# `PROG SUB --help`.
_clprobe_formats_of() {
    local key="$1 $2 (formats)"
    if [[ -z ${_clprobe_help_cache[$key]+set} ]]; then
        local line out=""
        while IFS= read -r line; do
            [[ $line =~ ^\ +--format\ [A-Z]+:\{([^}]*)\} ]] && out=${BASH_REMATCH[1]//,/ }
        done < <("$1" "$2" --help 2>/dev/null)
        _clprobe_help_cache[$key]=$out
    fi
    printf '%s' "${_clprobe_help_cache[$key]}"
}

# Subcommand names: the lines under "Subcommands:" in `PROG --help`.
_clprobe_subcommands_of() {
    local key="$1 (subcommands)"
    if [[ -z ${_clprobe_help_cache[$key]+set} ]]; then
        local line in_list=0 out=""
        while IFS= read -r line; do
            if [[ $line == Subcommands:* ]]; then
                in_list=1
            elif ((in_list)) && [[ $line =~ ^\ \ ([a-z][a-z-]*) ]]; then
                out+="${BASH_REMATCH[1]} "
            elif ((in_list)) && [[ -n $line && $line != \ * ]]; then
                in_list=0
            fi
        done < <("$1" --help 2>/dev/null)
        _clprobe_help_cache[$key]=$out
    fi
    printf '%s' "${_clprobe_help_cache[$key]}"
}

# Device selectors ("P:D") from `PROG list --json`, then the device kinds. Not cached: devices
# come and go with drivers.
_clprobe_devices_of() {
    local line selectors=""
    while IFS= read -r line; do
        [[ $line =~ \"selector\":\ *\"([^\"]+)\" ]] && selectors+="${BASH_REMATCH[1]} "
    done < <("$1" list --json 2>/dev/null)
    printf '%s%s' "$selectors" "$_clprobe_device_kinds"
}

# Probe ids and their group prefixes ("attention."), from `PROG list --probes` (cached: the
# registry is part of the binary).
_clprobe_probes_of() {
    local key="$1 (probes)"
    if [[ -z ${_clprobe_help_cache[$key]+set} ]]; then
        local id _ out="" groups=" "
        while read -r id _; do
            [[ $id == *.* ]] || continue
            [[ $groups == *" ${id%%.*}. "* ]] || groups+="${id%%.*}. "
            out+="$id "
        done < <("$1" list --probes 2>/dev/null)
        _clprobe_help_cache[$key]="${groups# }$out"
    fi
    printf '%s' "${_clprobe_help_cache[$key]}"
}

# Completion of a comma-separated list: the values not chosen yet, after the last comma.
_clprobe_comma_list() {
    local cur=$1 values=$2 head="" part=$1
    if [[ $cur == *,* ]]; then
        head=${cur%,*},
        part=${cur##*,}
    fi
    local v chosen=",${head}" out=()
    for v in $values; do
        [[ $chosen == *",$v,"* ]] && continue
        [[ -n $head && $v == none ]] && continue # "none" stands alone
        [[ $v == "$part"* ]] && out+=("$head$v")
    done
    ((${#out[@]})) && printf '%s\n' "${out[@]}"
    return 0
}

# bash splits words at COMP_WORDBREAKS (':' in "0:1", '=' in "--layers=..."): the reply replaces
# only the part after the last such character, so that much is taken off every candidate.
_clprobe_trim_wordbreaks() {
    local cur=$1 i tail=$1 c
    for ((i = ${#cur} - 1; i >= 0; i--)); do
        c=${cur:i:1}
        if [[ $COMP_WORDBREAKS == *"$c"* ]]; then
            tail=${cur:i+1}
            break
        fi
    done
    local cut=$((${#cur} - ${#tail})) k
    for k in "${!COMPREPLY[@]}"; do COMPREPLY[k]=${COMPREPLY[k]:cut}; done
    return 0
}

# --save FORMAT=FILE: a report format and '=' first, then files after the '='.
_clprobe_save_values() {
    local prog=$1 cur=$2 f
    if [[ $cur == *=* ]]; then
        while IFS= read -r f; do
            printf '%s=%s\n' "${cur%%=*}" "$f"
        done < <(compgen -f -- "${cur#*=}")
    else
        for f in $(_clprobe_formats_of "$prog" report); do
            [[ $f == "$cur"* ]] && printf '%s=\n' "$f"
        done
    fi
    return 0
}

# Candidates for the value of option OPT (given in full as CUR) of subcommand SUB, one a line.
_clprobe_values() {
    local prog=$1 sub=$2 opt=$3 cur=$4
    case $opt in
    --layers) _clprobe_comma_list "$cur" "$_clprobe_layers" ;;
    --workloads) _clprobe_comma_list "$cur" "$_clprobe_workloads" ;;
    --probes | --skip) _clprobe_comma_list "$cur" "$(_clprobe_probes_of "$prog")" ;;
    --format) compgen -W "$(_clprobe_formats_of "$prog" "$sub")" -- "$cur" ;;
    --save) _clprobe_save_values "$prog" "$cur" ;;
    -d | --device) compgen -W "$(_clprobe_devices_of "$prog")" -- "$cur" ;;
    --kernel-dir) compgen -d -- "$cur" ;;
    *) compgen -f -- "$cur" ;;
    esac
}

_clprobe() {
    local words=() cur
    # Words split at blanks only, so "0:1" and "--layers=a,b" stay one word (COMP_WORDS splits them).
    if [[ -n ${COMP_LINE+set} && -n ${COMP_POINT+set} ]]; then
        local line=${COMP_LINE:0:COMP_POINT}
        read -ra words <<<"$line"
        [[ $line =~ [[:space:]]$ || ${#words[@]} -eq 0 ]] && words+=("")
    else
        words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
    fi
    local n=${#words[@]}
    cur=${words[n - 1]}
    local prog=${words[0]} prev=""
    ((n > 1)) && prev=${words[n - 2]}
    command -v "$prog" >/dev/null 2>&1 || prog=clprobe

    local sub="" i w dashdash=0
    for ((i = 1; i < n - 1; i++)); do
        w=${words[i]}
        if [[ -n $sub && $w == -- ]]; then
            dashdash=$i
            break
        fi
        [[ -z $sub && $w != -* ]] && sub=$w
    done
    COMPREPLY=()

    if ((dashdash)); then
        # `clprobe trace -- PROGRAM ARGS`: a command, then its arguments (files).
        if ((n - 1 == dashdash + 1)); then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        fi
        return 0
    fi
    if [[ -z $sub ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_clprobe_subcommands_of "$prog") --help --version" -- "$cur")
        return 0
    fi

    local options
    options=$(_clprobe_options_of "$prog" "$sub")
    local names="" name kind takes_value=0
    while read -r name kind; do
        names+="$name "
        [[ $name == "$prev" && $kind == v ]] && takes_value=1
    done <<<"$options"
    if [[ $cur == --*=* ]]; then
        mapfile -t COMPREPLY < <(_clprobe_values "$prog" "$sub" "${cur%%=*}" "${cur#*=}")
        COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
    elif ((takes_value)); then
        mapfile -t COMPREPLY < <(_clprobe_values "$prog" "$sub" "$prev" "$cur")
    elif [[ $cur == -* ]]; then
        [[ $sub == trace ]] && names+="-- "
        mapfile -t COMPREPLY < <(compgen -W "$names" -- "$cur")
    else
        # Positional arguments: report files for report and compare; a records folder for replay.
        case $sub in
        report | compare | fleet) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        replay) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;  # a trace's records folder
        esac
    fi
    # Comma lists continue: no space after a value that may take another; nor after --save's "md=".
    [[ ${#COMPREPLY[@]} -eq 1 && ($prev == --layers || $prev == --workloads || $cur == --layers=* ||
        $cur == --workloads=*) ]] && compopt -o nospace 2>/dev/null
    [[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
    _clprobe_trim_wordbreaks "$cur"
}

complete -F _clprobe clprobe
