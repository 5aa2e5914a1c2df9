/*
 * kexec: what the agent's start-up asks of boot kexec (kexec.c), whose
 * task outlives the process: start() journals the task (journal.h) and
 * kexec -e's into the built kernel; the agent started after that boot
 * takes the task from the journal, runs it through the same start(),
 * run() and stop() (start() then checks the running kernel instead of
 * booting one), delivers its result, and kexec_finish() takes the
 * machine back to its known-good kernel.
 */
#ifndef AGENT_BOOT_KEXEC_H
#define AGENT_BOOT_KEXEC_H

#include <jansson.h>
#include <stdio.h>

/*
 * The claim reply of the task the journal under agent_workdir holds, into
 * *claim (a new reference, the caller's), or NULL when there is none. A
 * journal that cannot be read is set aside (logged) and counts as none.
 * ERR_CONFLICT when the machine runs a built kernel (its command line
 * has a bisect.build= marker) and there is no journal: the agent must not
 * claim tasks in it.
 */
int kexec_journal_claim(json_t **claim, const char *agent_workdir);

/*
 * After the journal's task was delivered (or spooled): clears the journal
 * and, when the running kernel is a built one, takes the machine back to
 * the known-good kernel (kexec back into the definition's good_kernel, or
 * its reboot command). Returns only when it did not reboot: 0 when there
 * was no need, else a code with err_msg().
 */
int kexec_finish(const char *agent_workdir);

/*
 * The kernels this machine remembers as not come back from a kexec
 * (agent_workdir/kexec/noreturn/), which its tasks skip without booting
 * them: kexec_noreturn_list() prints one line each, "BUILD_ID WHEN WHY",
 * and returns how many; kexec_noreturn_forget() removes the record of
 * one build id, or of every one for "all", so that the next task of
 * that kernel boots it again, and returns how many it removed.
 * ERR_INVALID for an id that is not one, ERR_NOTFOUND for one not
 * remembered.
 */
int kexec_noreturn_list(const char *agent_workdir, FILE *out);
int kexec_noreturn_forget(const char *agent_workdir, const char *id);

#endif
