/* The exposition's render in C, as a floor for issue 18's bar: every sample line of an
 * exposition (read from the file named first) made again from its text up to the value and
 * the value formatted by the C library (printf's %.17g, which round-trips a double; Go's and
 * Python's shortest form cost more), into one buffer. Prints the thread's CPU milliseconds
 * per render, the best of the batches asked for (second argument), each of 100 renders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double thread_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: expose_floor EXPOSITION BATCHES\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc(size + 1);
    if (!text || fread(text, 1, size, f) != (size_t)size) return 1;
    text[size] = '\0';
    fclose(f);
    size_t n = 0, cap = 1024;
    char **starts = malloc(cap * sizeof *starts);
    size_t *lengths = malloc(cap * sizeof *lengths);
    double *values = malloc(cap * sizeof *values);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *space = strrchr(line, ' ');
        if (line[0] == '#' || !space) continue;
        if (n == cap) {
            cap *= 2;
            starts = realloc(starts, cap * sizeof *starts);
            lengths = realloc(lengths, cap * sizeof *lengths);
            values = realloc(values, cap * sizeof *values);
        }
        starts[n] = line;
        lengths[n] = (size_t)(space - line) + 1;
        values[n] = strtod(space + 1, NULL);
        n++;
    }
    char *out = malloc(size + 64 * n + 1);
    double best = 1e9;
    for (int batch = 0; batch < atoi(argv[2]); batch++) {
        double t0 = thread_ms();
        for (int round = 0; round < 100; round++) {
            char *p = out;
            for (size_t i = 0; i < n; i++) {
                memcpy(p, starts[i], lengths[i]);
                p += lengths[i];
                p += sprintf(p, "%.17g\n", values[i] + round);
            }
        }
        double ms = (thread_ms() - t0) / 100;
        if (ms < best) best = ms;
    }
    printf("%zu %.6f\n", n, best);
    return 0;
}
