# mkrepo.sh: make git histories for tests whose commit ids are the same on
# every machine and every run. Source it (". tests/lib/mkrepo.sh") from sh.
#
# A commit id hashes the tree, the parents, both identities with their
# dates, and the message, so all of those are fixed here: names and emails
# are constants, and each repository keeps a tick counter (in its .git
# directory, so subshells and $(...) see it) that moves both dates one
# minute forward per commit. The user's and the system's git config are
# shut out, so neither a hook, a signing key nor init.defaultBranch leaks in.
#
#   mkrepo_init DIR                      new repository, branch main
#   mkrepo_commit DIR FILE CONTENT SUBJ  write CONTENT (plus a newline) to
#                                        FILE, commit it; prints the id
#   mkrepo_commit_all DIR SUBJ [BODY]    commit whatever is in the tree
#                                        (add -A); prints the id
#   mkrepo_rm DIR FILE SUBJ              remove FILE and commit; prints id
#   mkrepo_branch DIR NAME [START]       create branch NAME and switch to it
#   mkrepo_switch DIR NAME               switch to an existing branch
#   mkrepo_merge DIR BRANCH SUBJ         merge BRANCH (always a merge
#                                        commit); prints the id
#   mkrepo_tag DIR NAME [REV]            lightweight tag
#   mkrepo_sha DIR REV                   full id of REV
#   mkrepo_linear DIR LAST               a.txt "one" ("first"), tag v1, then
#                                        a.txt 2..LAST ("change N"): a line
#                                        of LAST commits, main at the last
#
# Every function returns git's status, so "set -e" callers stop on errors.

MKREPO_EPOCH=${MKREPO_EPOCH:-1700000000}

mkrepo_git() {
	_mkrepo_dir=$1
	shift
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
	GIT_AUTHOR_DATE="${_mkrepo_date:-@$MKREPO_EPOCH +0000}" \
	GIT_COMMITTER_DATE="${_mkrepo_date:-@$MKREPO_EPOCH +0000}" \
	GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL='author@example.com' \
	GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL='committer@example.com' \
	git -C "$_mkrepo_dir" -c commit.gpgsign=false -c core.autocrlf=false \
		-c core.hooksPath=/dev/null -c advice.detachedHead=false "$@"
}

# Moves the repository's clock one tick; the next git command run through
# mkrepo_git carries it (nothing is exported into the caller's shell).
mkrepo_tick() {
	_mkrepo_gitdir=$(mkrepo_git "$1" rev-parse --absolute-git-dir) || return
	_mkrepo_n=$(cat "$_mkrepo_gitdir/mkrepo-tick" 2>/dev/null || echo 0)
	_mkrepo_n=$((_mkrepo_n + 1))
	echo "$_mkrepo_n" > "$_mkrepo_gitdir/mkrepo-tick" || return
	_mkrepo_date="@$((MKREPO_EPOCH + _mkrepo_n * 60)) +0000"
}

mkrepo_init() {
	mkdir -p "$1" &&
	GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
		git init -q -b main "$1" &&
	mkrepo_git "$1" config user.name 'A U Thor' &&
	mkrepo_git "$1" config user.email 'author@example.com'
}

mkrepo_commit_all() {
	mkrepo_tick "$1" || return
	mkrepo_git "$1" add -A || return
	if [ -n "${3:-}" ]; then
		mkrepo_git "$1" commit -q --allow-empty -m "$2" -m "$3" || return
	else
		mkrepo_git "$1" commit -q --allow-empty -m "$2" || return
	fi
	mkrepo_git "$1" rev-parse HEAD
}

mkrepo_commit() {
	case $2 in
	*/*) mkdir -p "$1/${2%/*}" || return ;;
	esac
	printf '%s\n' "$3" > "$1/$2" || return
	mkrepo_commit_all "$1" "$4"
}

mkrepo_rm() {
	mkrepo_git "$1" rm -q -- "$2" || return
	mkrepo_commit_all "$1" "$3"
}

mkrepo_branch() {
	if [ -n "${3:-}" ]; then
		mkrepo_git "$1" checkout -q -b "$2" "$3"
	else
		mkrepo_git "$1" checkout -q -b "$2"
	fi
}

mkrepo_switch() {
	mkrepo_git "$1" checkout -q "$2"
}

mkrepo_merge() {
	mkrepo_tick "$1" || return
	mkrepo_git "$1" merge -q --no-ff --no-edit -m "$3" "$2" || return
	mkrepo_git "$1" rev-parse HEAD
}

mkrepo_tag() {
	mkrepo_git "$1" tag "$2" ${3:+"$3"}
}

mkrepo_sha() {
	mkrepo_git "$1" rev-parse --verify -q "$2^{commit}"
}

mkrepo_linear() {
	mkrepo_init "$1" > /dev/null &&
	mkrepo_commit "$1" a.txt one "first" > /dev/null &&
	mkrepo_tag "$1" v1 || return
	for _ml_i in $(seq 2 "$2"); do
		mkrepo_commit "$1" a.txt "$_ml_i" "change $_ml_i" > /dev/null || return
	done
}
