/*
 * fuzz_cli.c - cb_cli_parse, the hccl_test command line of the ten test
 * executables. Input: byte 0 picks the collective's descriptor, the rest is
 * split on NUL, space and newline into argv[1..] (argv[0] = "<name>_test").
 * On success the size sweep (cb_next_size) must move strictly upwards and stay
 * within maxbytes; the first 1000 steps are walked.
 */
#include "fuzz_common.h"
#include "driver/driver.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz_quiet_stderr();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    int nd = 0;
    while (cb_desc_table[nd])
        nd++;
    const cb_desc_t *d = cb_desc_table[data[0] % nd];
    char *s = fz_strndup(data + 1, size - 1);
    size_t n = size - 1;
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        abort();
    int argc = 0;
    char prog[64];
    snprintf(prog, sizeof prog, "%s_test", d->name);
    argv[argc++] = prog;
    for (size_t i = 0; i < n;) {
        while (i < n && (s[i] == '\0' || s[i] == ' ' || s[i] == '\n'))
            s[i++] = '\0';
        if (i >= n)
            break;
        argv[argc++] = s + i;
        while (i < n && s[i] != '\0' && s[i] != ' ' && s[i] != '\n')
            i++;
        if (i < n)
            s[i++] = '\0';
    }
    argv[argc] = NULL;
    cb_opts_t *o = malloc(sizeof *o);
    char err[256];
    if (!o)
        abort();
    int rc = cb_cli_parse(d, argc, argv, o, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == CB_EXIT_USAGE);
    if (rc == CB_EXIT_USAGE) {
        FZ_ASSERT(err[0] != '\0' && memchr(err, '\0', sizeof err));
    } else if (o->action == CB_ACT_RUN) {
        FZ_ASSERT(o->minbytes <= o->maxbytes);
        FZ_ASSERT(o->iters >= 1 && o->npus >= 1 && o->npus <= CB_MAX_NPUS);
        (void)cb_cli_check_ranks(o, o->npus, err, sizeof err);
        unsigned long long cur = o->minbytes, next;
        for (int k = 0; k < 1000 && cb_next_size(o, cur, &next); k++) {
            FZ_ASSERT(next > cur && next <= o->maxbytes);
            cur = next;
        }
    }
    free(o);
    free(argv);
    free(s);
    return 0;
}
