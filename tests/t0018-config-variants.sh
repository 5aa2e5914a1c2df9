#!/bin/sh
# t0018: a job's kernel config variant (POST /api/v1/jobs "config",
# bisectctl submit --config). Checked: every bad option is a 400 that
# says what is wrong and leaves the store as it was, a variant for a
# workload that builds no kernel is a 400 saying so, the options come
# back in the job's JSON, bisectctl show and the report's header, they
# reach the agent in the task's kernel build (curl plays the agent, and
# plays it on to a culprit, whose mail has them in its parameters, its
# kernel config and its reproduce line), and
# a real agent, on a stand-in kernel tree whose olddefconfig drops an
# option it does not know (as tests/guest/kernel-recipe.sh has it), fails the task naming
# the option and what Kconfig did with it: no commit is called good or
# bad, and the job fails saying why. No guest is booted: the build stops
# at the configuration. About 15 s here (2 cores, loaded).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"
. "$(dirname "$0")/lib/kstandin.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
for t in make gcc flex bison bc perl; do
	command -v $t > /dev/null || skip_all "$t missing (make deps)"
done
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

# The stand-in tree: olddefconfig drops CONFIG_NO_SUCH_OPTION, as Kconfig
# drops a symbol it does not know; it never gets as far as building.
R=$TEST_DIR/linux
kstandin_tree "$R"
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/ipv4/udp.c "/* a change */" "udp: touch" > /dev/null
mkrepo_tag "$R" v2

mkdir -p "$LAB/kconfig"
printf '# udp\nCONFIG_NET=y\nCONFIG_INET=y\n' > "$LAB/kconfig/udp.config"
lab_config "$R"
# lab_config's bench workload (no kernel) and one that builds a kernel.
sed -i 's/^  demo:$/  linux:/' "$LAB/bisectd.yaml"
sed -i '/^pools:$/i\
  udp:\
    type: iperf3\
    boot: qemu\
    kernel:\
      fragments: [udp]\
    iperf3: [--udp, "-4", -t, "1"]\
    build_timeout: 60' "$LAB/bisectd.yaml"
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > "$LAB/check.out" 2>&1
rc=$?
ok $rc "the lab's config with a kernel workload is valid"
[ $rc = 0 ] || sed 's/^/#   /' "$LAB/check.out"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
CTL=$BUILD/bisectctl
unlike() {	# unlike TEXT EXTENDED-REGEX DESCRIPTION
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ok 1 "$3"
		echo "#   matches: $2"
	else
		ok 0 "$3"
	fi
}
snapshot() { sqlite3 "$LAB/bisectd.db" .dump | md5sum; }

JOB='"repo":"linux","good":"v1","bad":"v2","workload":"udp"'
before=$(snapshot)
# check STATUS REGEX DESCRIPTION CONFIG_JSON [WORKLOAD]
check() {
	out=$(api POST /api/v1/jobs "{\"repo\":\"linux\",\"good\":\"v1\",\"bad\":\"v2\",\"workload\":\"${5:-udp}\",\"config\":$4}")
	like "$out" "^$1 .*\"error\": *\".*$2" "$3: $1 with a message"
	is "$(snapshot)" "$before" "$3: store unchanged"
}
check 400 "field 'config' must be an array" "config as a string" '"CONFIG_NET=y"'
check 400 "option 2 is not a string" "an option that is not a string" '["CONFIG_NET=y", 3]'
check 400 "config option 'CONFIG_net=y' must be CONFIG_NAME=value" "a name in lower case" '["CONFIG_net=y"]'
check 400 "config option 'NET=y' must be CONFIG_NAME=value" "a name without CONFIG_" '["NET=y"]'
check 400 "config option 'CONFIG_NET' must be" "no value" '["CONFIG_NET"]'
check 400 "'CONFIG_NET=yes': the value must be y, m, n" "a value Kconfig does not have" '["CONFIG_NET=yes"]'
check 400 "the value must be y, m, n" "an unterminated string" '["CONFIG_CMDLINE=\"quiet"]'
check 400 "the value must be y, m, n" "a newline in a string" '["CONFIG_CMDLINE=\"a\nb\""]'
check 400 "CONFIG_NET is given twice" "one option twice" '["CONFIG_NET=y", "CONFIG_NET=n"]'
many=$(seq 1 65 | sed 's/.*/"CONFIG_O&=y"/' | paste -sd, -)
check 400 "at most 64 options" "65 options" "[$many]"
check 400 "workload 'bench' builds no kernel" "a workload without a kernel build" '["CONFIG_NET=y"]' bench

# The round trip: the options as given, in the job, its show and its report.
out=$(api POST /api/v1/jobs "{$JOB,\"config\":[\"CONFIG_MITIGATION_RETPOLINE=n\",\"CONFIG_HZ=250\",\"CONFIG_CMDLINE=\\\"quiet\\\"\"]}")
like "$out" '^201 .*"config": *\[ *"CONFIG_MITIGATION_RETPOLINE=n", *"CONFIG_HZ=250", *"CONFIG_CMDLINE=\\"quiet\\"" *\]' \
	"a job with three options is created, and its JSON has them in order"
J1=$(echo "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
like "$(api GET /api/v1/jobs/$J1)" '"config": *\[ *"CONFIG_MITIGATION_RETPOLINE=n", *"CONFIG_HZ=250"' \
	"GET /jobs/ID has them"
is "$(q "SELECT config FROM jobs WHERE id = $J1")" '["CONFIG_MITIGATION_RETPOLINE=n","CONFIG_HZ=250","CONFIG_CMDLINE=\"quiet\""]' \
	"the store keeps them as a JSON array"
like "$("$CTL" show "$J1")" 'variant   kernel config \+ CONFIG_MITIGATION_RETPOLINE=n CONFIG_HZ=250 CONFIG_CMDLINE="quiet"' \
	"bisectctl show prints them"
like "$("$CTL" report "$J1" 2>&1)" 'kernel config \+ CONFIG_MITIGATION_RETPOLINE=n CONFIG_HZ=250' \
	"the report's header has them"
out=$(api POST /api/v1/jobs "{$JOB}")
like "$out" '^201 .*"config": *null' "a job without options has config null"
J2=$(echo "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
out=$(api POST /api/v1/jobs "{$JOB,\"config\":[]}")
like "$out" '^201 .*"config": *null' "an empty array is no options"
J3=$(echo "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')

# bisectctl: repeatable, "# CONFIG_X is not set" is =n, bad ones refused before any request.
out=$("$CTL" submit --repo linux --good v1 --bad v2 --workload udp --config 'CONFIG_BPF_JIT=y' \
	--config '# CONFIG_MITIGATION_RETPOLINE is not set' --json 2>&1 | tr -d '\n')
like "$out" '"config": *\[ *"CONFIG_BPF_JIT=y", *"CONFIG_MITIGATION_RETPOLINE=n" *\]' \
	"bisectctl submit --config twice, one as '# ... is not set': both, the second as =n"
J4=$(q "SELECT max(id) FROM jobs")
"$CTL" submit --repo linux --good v1 --bad v2 --workload udp --config 'CONFIG_BPF_JIT=on' > "$LAB/ctl.out" 2>&1
is "$?" 2 "bisectctl submit --config with a bad value: usage error (2)"
like "$(cat "$LAB/ctl.out")" "bad --config: config option 'CONFIG_BPF_JIT=on'" "... saying which and why"
out=$("$CTL" submit --repo linux --good v1 --bad v2 --workload bench --config CONFIG_NET=y 2>&1)
like "$out" "builds no kernel" "bisectctl submit --config on a workload without a kernel: bisectd's message"

# The task an agent claims has them in its kernel build; a job without has none.
for j in $J2 $J3 $J4; do api POST "/api/v1/jobs/$j/cancel" '' > /dev/null; done
TOK=$(lab_agent_token fake)
out=$(API_TOKEN=$TOK api POST /api/v1/agents/register '{"name":"fake","labels":["lab"]}')
out=$(API_TOKEN=$TOK api POST '/api/v1/agents/fake/claim?wait=5' '')
like "$out" '^200 .*"kernel": *\{.*"config": *\[ *"CONFIG_MITIGATION_RETPOLINE=n", *"CONFIG_HZ=250", *"CONFIG_CMDLINE=\\"quiet\\"" *\]' \
	"the claimed task's kernel build has the job's options"
api POST "/api/v1/jobs/$J1/cancel" '' > /dev/null
out=$(api POST /api/v1/jobs "{$JOB}")
out=$(API_TOKEN=$TOK api POST '/api/v1/agents/fake/claim?wait=5' '')
like "$out" '^200 .*"kernel": *\{' "a job without options: the task has a kernel build ..."
unlike "$out" '"config"' "... without options"
J5=$(q "SELECT max(id) FROM jobs")
api POST "/api/v1/jobs/$J5/cancel" '' > /dev/null

# The mail: curl plays the agent until the job names its culprit (v2
# measures 30% less than v1, with a little noise), then the mail has the
# options in its parameters, its kernel config and its reproduce line.
GOOD=$(git -C "$R" rev-parse v1)
out=$(api POST /api/v1/jobs "{$JOB,\"runs\":3,\"config\":[\"CONFIG_MITIGATION_RETPOLINE=n\",\"CONFIG_HZ=250\"]}")
like "$out" '^201 ' "a job to mail about is created"
J7=$(echo "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
seed=1
for _ in $(seq 1 400); do
	case $(q "SELECT state FROM jobs WHERE id = $J7") in queued|running) ;; *) break ;; esac
	c=$(API_TOKEN=$TOK api POST '/api/v1/agents/fake/claim?wait=2' '')
	case $c in 200*) ;; *) continue ;; esac
	task=$(echo "$c" | sed -n 's/.*"task": *\([0-9]*\).*/\1/p')
	att=$(echo "$c" | sed -n 's/.*"attempt": *\([0-9]*\).*/\1/p')
	sha=$(echo "$c" | sed -n 's/.*"commit": *"\([0-9a-f]*\)".*/\1/p')
	n=$(echo "$c" | sed -n 's/.*"runs": *\([0-9]*\).*/\1/p')
	level=70
	[ "$sha" = "$GOOD" ] && level=100
	seed=$((seed + 1))
	samples=$(awk -v n="$n" -v l="$level" -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < n; i++)
		printf "%s{\"value\":%.3f}", i ? "," : "", l * (1 + (rand() - 0.5) / 25) }')
	API_TOKEN=$TOK api POST "/api/v1/tasks/$task/result" \
		"{\"agent\":\"fake\",\"attempt\":$att,\"status\":\"ok\",\"samples\":[$samples]}" > /dev/null
done
is "$(q "SELECT state FROM jobs WHERE id = $J7")" done "the job names its culprit"
mail=$(api GET "/api/v1/jobs/$J7/report?format=mail")
like "$mail" "kernel config variant: CONFIG_MITIGATION_RETPOLINE=n CONFIG_HZ=250" \
	"the mail's parameters have the job's options"
like "$(echo "$mail" | tr '\n\t' '  ')" "the job's options, after the fragments: +# CONFIG_MITIGATION_RETPOLINE is not set +CONFIG_HZ=250" \
	"... its kernel config has them after the fragments, =n as a .config says it"
like "$mail" "bisectctl submit .* --config 'CONFIG_MITIGATION_RETPOLINE=n' --config 'CONFIG_HZ=250'" \
	"... and its reproduce line gives them as --config"
if command -v gnuplot > /dev/null; then
	like "$(api GET "/api/v1/jobs/$J7/charts/compare.svg")" "CONFIG_MITIGATION_RETPOLINE=n CONFIG_HZ=250 \\(job $J7\\)" \
		"the compare chart names the job's bar by its options"
else
	ok 0 "# SKIP gnuplot missing: the compare chart's bar (make deps)"
fi

# A real agent: an option this kernel's Kconfig refuses is refused (the
# job's doing, not the commit's, at every agent and attempt), naming it and
# what became of it, and the job fails at once.
lab_start_agent qa -1
out=$(api POST /api/v1/jobs "{$JOB,\"runs\":1,\"config\":[\"CONFIG_NET=y\",\"CONFIG_NO_SUCH_OPTION=y\"]}")
like "$out" '^201 ' "a job asking for an option the kernel does not have is created"
J6=$(echo "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p')
for _ in $(seq 1 600); do
	case $(q "SELECT state FROM jobs WHERE id = $J6") in
	queued|running) sleep 0.2 ;;
	*) break ;;
	esac
done
like "$(q "SELECT state || ' ' || error FROM tasks WHERE job_id = $J6 ORDER BY id LIMIT 1")" \
	"^failed kconfig: this kernel's Kconfig refuses the job's --config: .*CONFIG_NO_SUCH_OPTION=y requested \\(the job's --config\\) but the kernel's olddefconfig dropped it" \
	"the task failed, naming the option and what olddefconfig did with it"
is "$(q "SELECT count(*) FROM tasks WHERE job_id = $J6 AND attempt > 1")" 0 "... once: no task is tried again"
unlike "$(q "SELECT error FROM tasks WHERE job_id = $J6 ORDER BY id LIMIT 1")" "CONFIG_NET=y requested" \
	"... and not the option Kconfig kept"
is "$(q "SELECT count(*) FROM events WHERE job_id = $J6 AND kind IN ('retry', 'skip')")" 0 \
	"... nor any commit skipped for it"
is "$(q "SELECT count(*) FROM job_commits WHERE job_id = $J6 AND state IN ('good', 'bad')")" 0 \
	"no commit is called good or bad"
like "$(q "SELECT state || ': ' || error FROM jobs WHERE id = $J6")" \
	"^failed: the job's settings are refused at commit [0-9]+: .*CONFIG_NO_SUCH_OPTION" "the job fails at once, saying why"
if [ "$tap_failed" != 0 ]; then
	tail -n 30 "$LAB/qa.log" | sed 's/^/#   agent: /'
	tail -n 10 "$LAB/bisectd.log" | sed 's/^/#   bisectd: /'
fi

tap_plan "$tap_n"
tap_done
