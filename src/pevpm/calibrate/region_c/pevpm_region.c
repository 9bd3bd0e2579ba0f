/* pevpm region timing: see pevpm_region.h.  Plain C99 and POSIX; no MPI. */
#define _POSIX_C_SOURCE 200809L
#include "pevpm_region.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PEVPM_MAX_REGIONS 64
#define PEVPM_NAME_MAX 64

struct pevpm_region {
    char name[PEVPM_NAME_MAX];
    double started;            /* < 0: not running */
    double *seconds;
    size_t count, capacity;
};

static struct pevpm_region regions[PEVPM_MAX_REGIONS];
static int region_count;
static int exit_hook_set;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int valid_name(const char *name) {
    size_t i, n = strlen(name);
    if (n == 0 || n >= PEVPM_NAME_MAX) return 0;
    for (i = 0; i < n; i++) {
        char c = name[i];
        int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!letter && !(i > 0 && c >= '0' && c <= '9')) return 0;
    }
    return 1;
}

static struct pevpm_region *find(const char *name, int create) {
    int i;
    for (i = 0; i < region_count; i++)
        if (strcmp(regions[i].name, name) == 0) return &regions[i];
    if (!create) return NULL;
    if (!valid_name(name)) {
        fprintf(stderr, "pevpm_region: region name '%s' is not a C identifier "
                        "(at most %d characters); not timed\n", name, PEVPM_NAME_MAX - 1);
        return NULL;
    }
    if (region_count == PEVPM_MAX_REGIONS) {
        fprintf(stderr, "pevpm_region: more than %d regions; '%s' not timed\n",
                PEVPM_MAX_REGIONS, name);
        return NULL;
    }
    strcpy(regions[region_count].name, name);
    regions[region_count].started = -1.0;
    return &regions[region_count++];
}

static void write_at_exit(void) { pevpm_region_write(); }

void pevpm_region_begin(const char *name) {
    struct pevpm_region *r = find(name, 1);
    if (!exit_hook_set) {
        atexit(write_at_exit);
        exit_hook_set = 1;
    }
    if (r) r->started = now();
}

void pevpm_region_end(const char *name) {
    double end = now();
    struct pevpm_region *r = find(name, 0);
    if (!r || r->started < 0) {
        fprintf(stderr, "pevpm_region: pevpm_region_end(\"%s\") without its begin\n", name);
        return;
    }
    if (r->count == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 1024;
        double *grown = (double *)realloc(r->seconds, capacity * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "pevpm_region: out of memory; a call of '%s' not kept\n", name);
            return;
        }
        r->seconds = grown;
        r->capacity = capacity;
    }
    r->seconds[r->count++] = end - r->started;
    r->started = -1.0;
}

void pevpm_region_write(void) {
    const char *folder = getenv("PEVPM_REGION_DIR");
    FILE *out;
    char path[4096];
    int i;
    size_t k;
    if (folder && *folder) {
        snprintf(path, sizeof path, "%s/regions-%ld.txt", folder, (long)getpid());
        out = fopen(path, "a");
        if (!out) {
            fprintf(stderr, "pevpm_region: cannot write %s; region times on stdout\n", path);
            out = stdout;
        }
    } else if (getenv("PEVPM_REGION_STDOUT")) {
        out = stdout;
    } else {
        out = NULL;                /* an ordinary run: keep quiet */
    }
    for (i = 0; i < region_count; i++) {
        for (k = 0; out && k < regions[i].count; k++)
            fprintf(out, "PEVPM-REGION %s %.9f\n", regions[i].name, regions[i].seconds[k]);
        regions[i].count = 0;
    }
    if (out && out != stdout) fclose(out); else if (out) fflush(out);
}
