// Runs a network of a glow_mlir bundle: loads its constant weights, reads each input from a raw file, calls the
// entry point, then prints each output and writes its raw bytes to a file. Built by build.sh, which names the
// bundle's header (BUNDLE_HEADER), its entry point (BUNDLE_ENTRY) and its macro prefix (BUNDLE_PREFIX), and with
// --embed the weights as a C array (BUNDLE_WEIGHTS_TXT) instead of a file, or with BUNDLE_OBJECT_WEIGHTS those the
// bundle's object holds (glow-compile --weights-in-object); firmware (cortex-m/build.sh) also sets
// BUNDLE_STATIC_REGIONS: the other two regions are static arrays, nothing comes from a heap.
//
//   runner [WEIGHTS.bin] INPUT0.bin [INPUT1.bin ...] [--out DIR] [--repeat N] [--profile]
//
// Input k is the k-th symbol of the bundle's symbol table, read as raw bytes (its exact size, native byte order);
// output k is written to DIR/output<k>.bin. With --repeat N the network runs N more times, timed: the mean, the
// fastest and the median run. With --profile as well, each of those runs calls the partitions one by one (as the
// entry point does) and times each: a partitioned bundle (glow-compile --partitions K) shows where the time goes.
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include BUNDLE_HEADER

#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)
#define MACRO(suffix) XCAT(BUNDLE_PREFIX, suffix)
#define SYMBOL(suffix) XCAT(BUNDLE_ENTRY, suffix)

#define MEM_ALIGN MACRO(_MEM_ALIGN)
#define NUM_INPUTS MACRO(_NUM_INPUTS)
#define NUM_OUTPUTS MACRO(_NUM_OUTPUTS)

#ifdef BUNDLE_WEIGHTS_TXT
// The weights compiled in, as firmware would hold them (aligned as the header says).
static _Alignas(MEM_ALIGN) const uint8_t embedded_weights[MACRO(_CONSTANT_MEM_SIZE) + 1] = {
#include BUNDLE_WEIGHTS_TXT
};
#endif

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "runner: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

#ifdef BUNDLE_STATIC_REGIONS
// Firmware: the mutable weights and the activations as static arrays of the planned sizes (no heap).
static _Alignas(MEM_ALIGN) uint8_t static_mutable[MACRO(_MUTABLE_MEM_SIZE) + 1];
static _Alignas(MEM_ALIGN) uint8_t static_activations[MACRO(_ACTIVATIONS_MEM_SIZE) + 1];
#endif

#if defined(BUNDLE_WEIGHTS_TXT) || defined(BUNDLE_OBJECT_WEIGHTS)
#define EMBEDDED_WEIGHTS 1
#endif

#if !(defined(BUNDLE_STATIC_REGIONS) && defined(EMBEDDED_WEIGHTS))
// A region of `size` bytes starting at a multiple of MEM_ALIGN (aligned_alloc wants a non-zero multiple of it).
static uint8_t *alloc_region(uint64_t size) {
  uint64_t rounded = (size + MEM_ALIGN - 1) / MEM_ALIGN * MEM_ALIGN;
  uint8_t *region = aligned_alloc(MEM_ALIGN, rounded ? rounded : MEM_ALIGN);
  if (!region) fail("out of memory", NULL);
  return region;
}
#endif

// Reads exactly `size` bytes from `path` into `dest`: a file of another size is an error.
static void read_exactly(const char *path, uint8_t *dest, uint64_t size) {
  FILE *f = fopen(path, "rb");
  if (!f) fail("cannot open", path);
  uint64_t got = fread(dest, 1, size, f);
  int extra = fgetc(f);
  fclose(f);
  if (got != size || extra != EOF) {
    fprintf(stderr, "runner: %s: expected exactly %llu bytes\n", path, (unsigned long long)size);
    exit(1);
  }
}

static void write_file(const char *path, const uint8_t *data, uint64_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) fail("cannot write", path);
}

// Prints a symbol's name, type, shape and first values.
static void print_symbol(const struct SymbolTableEntry *s, const struct GlowMlirSymbolType *t, const uint8_t *data) {
  printf("%s: %s [", s->name, t->elementType);
  for (uint64_t d = 0; d < t->rank; d++) printf(d ? ", %llu" : "%llu", (unsigned long long)t->shape[d]);
  printf("]");
  uint64_t n = s->size / t->elementSize;
  for (uint64_t i = 0; i < n && i < 8; i++) {
    const uint8_t *p = data + i * t->elementSize;
    if (!strcmp(t->elementType, "float32")) printf(" %.6g", (double)*(const float *)p);
    else if (!strcmp(t->elementType, "float64")) printf(" %.6g", *(const double *)p);
    else if (!strcmp(t->elementType, "int64")) printf(" %lld", (long long)*(const int64_t *)p);
    else if (!strcmp(t->elementType, "int32")) printf(" %d", (int)*(const int32_t *)p);
    else printf(" %u", (unsigned)*p);
  }
  printf(n > 8 ? " ...\n" : "\n");
}

static double seconds(void) {
#if defined(__arm__) && !defined(__linux__)  // firmware: the C library's clock (semihosting: the host's)
  return (double)clock() / CLOCKS_PER_SEC;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
#endif
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const char *files[NUM_INPUTS + 2];
  int nfiles = 0, repeat = 0, profile = 0;
  const char *out_dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--out") && i + 1 < argc) out_dir = argv[++i];
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--profile")) profile = 1;
    else if (nfiles < NUM_INPUTS + 1) files[nfiles++] = argv[i];
    else fail("too many arguments", argv[i]);
  }
#ifdef EMBEDDED_WEIGHTS
  const int weights_files = 0;
#else
  const int weights_files = 1;
#endif
  if (nfiles != weights_files + NUM_INPUTS) {
    fprintf(stderr, "usage: %s%s", argv[0], weights_files ? " WEIGHTS.bin" : "");
    for (int k = 0; k < NUM_INPUTS; k++) fprintf(stderr, " %s.bin", SYMBOL(_symbols)[k].name);
    fprintf(stderr, " [--out DIR] [--repeat N] [--profile]\n");
    return 2;
  }

#if defined(BUNDLE_OBJECT_WEIGHTS)
  uint8_t *constant_weight = (uint8_t *)SYMBOL(_constantWeight);  // in the bundle's object; only read
#elif defined(BUNDLE_WEIGHTS_TXT)
  uint8_t *constant_weight = (uint8_t *)embedded_weights;  // only read by the network
#else
  uint8_t *constant_weight = alloc_region(MACRO(_CONSTANT_MEM_SIZE));
  read_exactly(files[0], constant_weight, MACRO(_CONSTANT_MEM_SIZE));
#endif
#ifdef BUNDLE_STATIC_REGIONS
  uint8_t *mutable_weight = static_mutable, *activations = static_activations;
#else
  uint8_t *mutable_weight = alloc_region(MACRO(_MUTABLE_MEM_SIZE));
  uint8_t *activations = alloc_region(MACRO(_ACTIVATIONS_MEM_SIZE));
#endif
  for (int k = 0; k < NUM_INPUTS; k++) {
    const struct SymbolTableEntry *s = &SYMBOL(_symbols)[k];
    read_exactly(files[weights_files + k], mutable_weight + s->offset, s->size);
  }

  for (int p = 0; p < MACRO(_NUM_PARTITIONS); p++) {
    const struct GlowMlirPartition *part = &SYMBOL(_partitions)[p];
    printf("partition %d: %s, %llu FLOPs, %llu activation bytes\n", p, part->name,
           (unsigned long long)part->flops, (unsigned long long)part->activationBytes);
  }
  int rc = BUNDLE_ENTRY(constant_weight, mutable_weight, activations);
  if (rc != GLOW_SUCCESS) {
    fprintf(stderr, "runner: the network returned %d\n", rc);
    return 1;
  }
  for (int k = NUM_INPUTS; k < NUM_INPUTS + NUM_OUTPUTS; k++) {
    const struct SymbolTableEntry *s = &SYMBOL(_symbols)[k];
    print_symbol(s, &SYMBOL(_symbol_types)[k], mutable_weight + s->offset);
    if (out_dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output%d.bin", out_dir, k - NUM_INPUTS);
      write_file(path, mutable_weight + s->offset, s->size);
    }
  }
  if (repeat > 0) {
    // column 0: whole runs; column 1 + p: partition p (with --profile)
    int columns = 1 + (profile ? MACRO(_NUM_PARTITIONS) : 0);
    double *times = malloc(sizeof(double) * (size_t)repeat * (size_t)columns);
    if (!times) fail("out of memory", NULL);
    double start = seconds();
    for (int r = 0; r < repeat; r++) {
      double t0 = seconds();
      if (profile) {
        for (int p = 0; p < MACRO(_NUM_PARTITIONS); p++) {
          double tp = seconds();
          SYMBOL(_partitions)[p].run(constant_weight, mutable_weight, activations);
          times[(size_t)(1 + p) * repeat + r] = seconds() - tp;
        }
      } else {
        BUNDLE_ENTRY(constant_weight, mutable_weight, activations);
      }
      times[r] = seconds() - t0;
    }
    double total = seconds() - start;
    for (int c = 0; c < columns; c++) qsort(times + (size_t)c * repeat, (size_t)repeat, sizeof(double), by_value);
    printf("%.3f ms per run (%d runs; fastest %.3f ms, median %.3f ms)\n", total * 1e3 / repeat, repeat,
           times[0] * 1e3, times[repeat / 2] * 1e3);
    for (int p = 0; p + 1 < columns; p++) {
      const struct GlowMlirPartition *part = &SYMBOL(_partitions)[p];
      const double *t = times + (size_t)(1 + p) * repeat;
      printf("profile %d: %s fastest %.4f ms, median %.4f ms, %.2f GFLOP/s\n", p, part->name, t[0] * 1e3,
             t[repeat / 2] * 1e3, t[0] > 0 ? (double)part->flops / t[0] * 1e-9 : 0.0);
    }
    free(times);
  }
  return 0;
}
