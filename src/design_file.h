/*
 * design_file.h - the header of a design file (design_file.c describes the
 * format), shared by design_file.c and design_file_shuffle.c.
 */
#ifndef SGFS_DESIGN_FILE_H
#define SGFS_DESIGN_FILE_H

#include <stdint.h>
#include <stdio.h>

#define HEADER 64
#define PAGE 4096
#define MAGIC "SGFSDSN1"
#define ORDER 0x01020304u
#define CHUNK 1024              /* rows written or read per block */

typedef struct sgfs_dfh {
    int64_t N, ncol, names_len, offset;
    int bytes, shuffled;
} sgfs_dfh;

/* the HEADER bytes of h into b */
void sgfs_dfh_encode(const sgfs_dfh *h, unsigned char *b);
/* the checked header of an open file into h: 1, or 0 with what is wrong
   with the file in *why */
int sgfs_dfh_read(FILE *f, sgfs_dfh *h, const char **why);

#endif
