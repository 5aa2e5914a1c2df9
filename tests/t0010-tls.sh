#!/bin/sh
# t0010: TLS and IPv6. A CA and a server certificate made here (openssl),
# bisectd on https on loopback; agents (ca_file) and bisectctl
# (BISECTD_CA, --ca-file) finish a job over it; a client that trusts
# another CA is refused and says why; plain HTTP to the TLS port gets no
# answer; bisectd listens on [::1] (skipped where the host has no ::1).
# The bench is the stand-in that draws its numbers
# (tests/lib/standin-bench.sh).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

command -v openssl > /dev/null || skip_all "openssl missing (make deps)"
command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB"

# mkca NAME: a self-signed CA in $TEST_DIR/NAME.pem (key NAME.key).
mkca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj "/CN=bisectd test $1" -keyout "$TEST_DIR/$1.key" -out "$TEST_DIR/$1.pem" 2> /dev/null
}
mkca ca && mkca other
printf 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n' > "$TEST_DIR/san.ext"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
	-keyout "$TEST_DIR/server.key" -out "$TEST_DIR/server.csr" 2> /dev/null &&
openssl x509 -req -in "$TEST_DIR/server.csr" -CA "$TEST_DIR/ca.pem" -CAkey "$TEST_DIR/ca.key" \
	-CAcreateserial -days 2 -extfile "$TEST_DIR/san.ext" -out "$TEST_DIR/server.pem" 2> /dev/null
ok $? "a CA and a server certificate for 127.0.0.1 and ::1 are made"

sh "$TOP/tests/lib/mkdemo.sh" "$LAB/demo.git" > "$LAB/mkdemo.out"
LAB_TLS_CERT=$TEST_DIR/server.pem LAB_TLS_KEY=$TEST_DIR/server.key LAB_CA=$TEST_DIR/ca.pem
LAB_STANDIN=1 LAB_RUNS=3 lab_config "$LAB/demo.git"
like "$LAB_URL" '^https://127\.0\.0\.1:' "the lab's URL is https"
out=$("$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" 2>&1)
is "$?" 0 "bisectd -n accepts the certificate and its key"
# -n loads them as the server will: a key of another certificate, a file that is not PEM, one missing.
for bad in "$TEST_DIR/other.key|do not match|another certificate's key" \
	   "$TEST_DIR/san.ext|PEM|a key that is not PEM" "$TEST_DIR/nope.key|No such file|a key that is not there"; do
	sed "s|^tls_key: .*|tls_key: ${bad%%|*}|" "$LAB/bisectd.yaml" > "$TEST_DIR/bad.yaml"
	out=$("$BUILD/bisectd" -n -f "$TEST_DIR/bad.yaml" 2>&1)
	rc=$?
	rest=${bad#*|}
	ok $(( rc == 0 )) "bisectd -n refuses ${rest#*|}"
	like "$out" "tls_key.*${rest%%|*}" "... and says so"
done
lab_start_bisectd || { echo "Bail out! bisectd did not start on https"; exit 1; }
like "$(cat "$LAB/bisectd.log")" "listening on https://127\.0\.0\.1:$LAB_PORT" "bisectd says it serves https"

out=$(lab_curl -sS -w ' %{http_code}' "$LAB_URL/api/v1/agents")
like "$out" '"agents".* 200$' "a client trusting the CA is served"
out=$(curl -sS --cacert "$TEST_DIR/other.pem" "$LAB_URL/api/v1/agents" 2>&1)
is "$?" 60 "curl trusting another CA refuses the server (exit 60: certificate not verified)"
out=$("$BUILD/bisectctl" --ca-file "$TEST_DIR/other.pem" agents 2>&1)
rc=$?
is "$rc" 3 "bisectctl trusting another CA fails (exit 3)"
like "$out" 'is not trusted.*--ca-file or BISECTD_CA' "... and says which CA option to give"
out=$(env -u BISECTD_CA "$BUILD/bisectctl" agents 2>&1)
like "$out" 'is not trusted' "bisectctl without a CA does not fall back to an unverified connection"
out=$("$BUILD/bisectctl" agents 2>&1)
is "$?" 0 "bisectctl with BISECTD_CA is served"
out=$(curl -sS -m 5 -w '%{http_code}' "http://127.0.0.1:$LAB_PORT/api/v1/agents" 2>&1)
rc=$?
ok $(( rc == 0 )) "plain HTTP to the TLS port gets no HTTP answer (curl exit $rc)"
out=$(lab_curl -sS -w ' %{http_code}' "$LAB_URL/api/v1/agents")
like "$out" ' 200$' "... and the server still serves TLS clients after it"

# An agent that trusts another CA never gets in, and its log says why.
ca=$LAB_CA
LAB_CA=
lab_start_agent rogue 0 "ca_file: $TEST_DIR/other.pem"
LAB_CA=$ca
lab_start_agent lab1 0
lab_start_agent lab2 $(( $(nproc) > 1 ? 1 : 0 ))
timeout 300 "$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main --workload bench \
	--policy split --watch > "$LAB/watch.out" 2>&1
rc=$?
like "$(q "SELECT state FROM jobs WHERE id = 1")" '^(done|failed|not-reproduced)$' \
	"a job over TLS ends (bisectctl exited $rc)"
like "$(q "SELECT count(*) FROM samples WHERE job_id = 1")" '^[1-9]' "... with samples the agents uploaded over TLS"
is "$(q "SELECT count(DISTINCT agent_id) FROM tasks WHERE job_id = 1 AND state = 'done'")" 2 \
	"... from both agents with ca_file"
is "$(q "SELECT count(*) FROM agents WHERE name = 'rogue'")" 0 "the agent trusting another CA never registered"
like "$(cat "$LAB/rogue.log")" 'is not trusted' "... and its log says the server is not trusted"

# A certificate that is not PEM, or a key of another certificate: bisectd does not start, and says why.
pb=$(lab_free_port)
sed -e "s|^listen: .*|listen: 127.0.0.1:$pb|" -e "s|^tls_cert: .*|tls_cert: $LAB/bisectd.yaml|" \
	"$LAB/bisectd.yaml" > "$LAB/bad-cert.yaml"
out=$(timeout 20 "$BUILD/bisectd" -f "$LAB/bad-cert.yaml" 2>&1)
ok $(( $? == 0 )) "bisectd refuses to start with a tls_cert that is not PEM"
like "$out" "tls_cert '$LAB/bisectd.yaml' is not a PEM file" "... and names the file"
sed -e "s|^listen: .*|listen: 127.0.0.1:$pb|" -e "s|^tls_key: .*|tls_key: $TEST_DIR/other.key|" \
	"$LAB/bisectd.yaml" > "$LAB/bad-key.yaml"
out=$(timeout 20 "$BUILD/bisectd" -f "$LAB/bad-key.yaml" 2>&1)
ok $(( $? == 0 )) "bisectd refuses to start with the key of another certificate"
like "$out" "tls_key '$TEST_DIR/other.key'.*do not match" "... and says the key is not the certificate's"

# IPv6: [::1].
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2> /dev/null; then
	lab_stop
	LAB6=$TEST_DIR/lab6
	mkdir -p "$LAB6"
	p6=$(lab_free_port)
	# The same store: the job above is there.
	sed -e "s|^listen: .*|listen: \"[::1]:$p6\"|" "$LAB/bisectd.yaml" > "$LAB6/bisectd.yaml"
	"$BUILD/bisectd" -f "$LAB6/bisectd.yaml" > "$LAB6/bisectd.log" 2>&1 &
	LAB_PIDS="$LAB_PIDS $!"
	up=1
	for _ in $(seq 1 100); do
		lab_curl -fsS "https://[::1]:$p6/api/v1/agents" > /dev/null 2>&1 && { up=0; break; }
		sleep 0.1
	done
	ok $up "bisectd listens on [::1] with TLS"
	out=$("$BUILD/bisectctl" --server "https://[::1]:$p6" --json jobs 2>&1)
	is "$?" 0 "bisectctl reaches https://[::1]"
	like "$out" '"id": *1' "... and lists the job of the store"
	out=$(curl -sS -m 5 --cacert "$LAB_CA" "https://127.0.0.1:$p6/api/v1/agents" 2>&1)
	ok $(( $? == 0 )) "... on IPv6 only (127.0.0.1 on its port is refused)"
else
	echo "ok $((tap_n + 1)) # SKIP no ::1 on this host"
	tap_n=$((tap_n + 1))
fi

tap_plan "$tap_n"
tap_done
