/* pevpm region timing for C, C++ and Fortran programs (pevpm calibrate).
 *
 *   #include "pevpm_region.h"
 *   pevpm_region_begin("spmv");
 *   spmv(A, x, y);
 *   pevpm_region_end("spmv");
 *
 * Each call's duration is kept in memory (nothing is printed inside the
 * timed loop) and written when the process exits, or at
 * pevpm_region_write(), as "PEVPM-REGION NAME SECONDS" lines: into its own
 * file in $PEVPM_REGION_DIR, which `pevpm calibrate` sets when it runs the
 * program, or on standard output when PEVPM_REGION_STDOUT is set; an
 * ordinary run writes nothing.  Build with the program's own compiler:
 *
 *   mpicc -O2 prog.c $(pevpm calibrate --cflags) $(pevpm calibrate --libs) -o prog
 *   pevpm calibrate -o cal.json -- mpiexec -n 2 ./prog
 */
#ifndef PEVPM_REGION_H
#define PEVPM_REGION_H

#ifdef __cplusplus
extern "C" {
#endif

/* Start timing region NAME (a C identifier: letters, digits, '_'). */
void pevpm_region_begin(const char *name);
/* Stop timing region NAME and keep the call's duration. */
void pevpm_region_end(const char *name);
/* Write (and forget) the durations kept so far; also done at exit. */
void pevpm_region_write(void);

#ifdef __cplusplus
}
#endif

#endif
