/* A fake libnvidia-ml.so.1 for tests and benchmarks: the NVML symbols gputui's nvidia backend (and the
 * peers nvitop/gpustat) call, returning scripted, deterministic values. Built with
 *   gcc -shared -fPIC -O2 -o libnvidia-ml.so.1 fake_nvml.c [-DNO_V3] [-DNO_MEM_V2]
 * and loaded through LD_LIBRARY_PATH. -DNO_V3 leaves out nvmlDeviceGetComputeRunningProcesses_v3 (an old
 * driver: the unversioned pynvml wrapper raises NVMLLibraryMismatchError); -DNO_MEM_V2 leaves out
 * nvmlDeviceGetMemoryInfo_v2.
 *
 * Scripted by environment variables, read at nvmlInit:
 *   FAKE_NVML_GPUS=N             number of GPUs (default 2, at most 16)
 *   FAKE_NVML_NAME=...           product name (default "NVIDIA A100-SXM4-40GB")
 *   FAKE_NVML_SEED=...           seeds the UUIDs (default: SLURMD_NODENAME, else "fake")
 *   FAKE_NVML_UNSUPPORTED=i:f,.. field f of GPU i (or *) returns NOT_SUPPORTED;
 *                                f in util, mem, temp, power, limit, energy, clock, procs
 *   FAKE_NVML_NO_PERMISSION=i:f  same, returning NO_PERMISSION
 *   FAKE_NVML_LOST=i:n           GPU i returns GPU_IS_LOST from its n-th utilisation call on
 *   FAKE_NVML_INIT=code          nvmlInit returns this NVML return code (9 driver not loaded, 4 ...)
 *   FAKE_NVML_MIG=i:k            GPU i is in MIG mode with k MIG devices
 *   FAKE_NVML_PROCS=i:pid:bytes,...  compute processes per GPU
 *   FAKE_NVML_CALLS=path         at nvmlShutdown, write how often each value getter was called, one
 *                                "<function> <device> <calls>" line each (device: "i", MIG j of GPU i "i/j";
 *                                nvmlDeviceGetClockInfo is counted per clock type: ".../graphics|sm|mem|video")
 *
 * Values of GPU i (MIG instances: their parent's n and i; utilisation and power NOT_SUPPORTED), where n
 * is how often GPU i's utilisation has been read (gputui reads it first in every tick: the tick, from 1):
 *   utilisation gpu = (7i + 13n) % 101 %, memory = gpu / 2 %
 *   memory total 40 GiB (MIG: split evenly); used = (total / 100) * ((20 + 3i + n) % 90) bytes (v2);
 *     v2 reserved 512 MiB; v1 "used" counts the reserved memory too, as NVML documents (not with NO_MEM_V2)
 *   temperature (GPU sensor) 40 + (n + i) % 30 C; threshold 90 C
 *   power 60000 + ((13n + 7i) % 101) * 3000 mW; enforced limit 400000 mW; management limit 450000 mW
 *   total energy 1000000 (i + 1) + 250000 n mJ
 *   clocks: graphics 1100, SM 1410, memory 1215, video 1095 MHz; max clocks 1980, 1980, 1593, 1755 MHz
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
#define OK 0
#define UNINIT 1
#define INVALID_ARG 2
#define NOT_SUPPORTED 3
#define NO_PERMISSION 4
#define INSUFFICIENT_SIZE 7
#define GPU_IS_LOST 15

#define MAXGPU 16
#define MAXMIG 7
#define MAXPROC 32

enum { F_UTIL, F_MEM, F_TEMP, F_POWER, F_LIMIT, F_ENERGY, F_CLOCK, F_PROCS, F_N };
static const char *FIELD_NAMES[F_N] = {"util", "mem", "temp", "power", "limit", "energy", "clock", "procs"};

typedef struct dev {
    int index, is_mig, gi, ci;
    struct dev *parent;
    char uuid[96];
    char bus[32];
    unsigned long long util_calls, mem_total;
    int refuse[F_N];
    long lost_after; /* -1: never */
    int mig_count;
    struct dev *migs[MAXMIG];
} dev_t_;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} procinfo_t;

typedef struct { unsigned int gpu, memory; } util_t;
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } mem2_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci_t;

static dev_t_ gpus[MAXGPU];
static dev_t_ migs[MAXGPU * MAXMIG];
static int ngpu = 0, inited = 0;
static char name[96] = "NVIDIA A100-SXM4-40GB";
static procinfo_t procs[MAXGPU][MAXPROC];
static int nprocs[MAXGPU];

/* Call counters of the value getters, per device slot (GPUs, then MIG instances). */
enum {
    C_UTIL, C_MEM, C_MEM_V2, C_TEMP, C_POWER, C_LIMIT, C_MGMT_LIMIT, C_ENERGY,
    C_CLOCK_GRAPHICS, C_CLOCK_SM, C_CLOCK_MEM, C_CLOCK_VIDEO, C_PROCS_V3, C_PROCS_V2, C_N
};
static const char *CALL_NAMES[C_N] = {
    "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit",
    "nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetTotalEnergyConsumption",
    "nvmlDeviceGetClockInfo/graphics", "nvmlDeviceGetClockInfo/sm", "nvmlDeviceGetClockInfo/mem",
    "nvmlDeviceGetClockInfo/video", "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetComputeRunningProcesses_v2",
};
#define NSLOT (MAXGPU + MAXGPU * MAXMIG)
static unsigned long long calls[C_N][NSLOT];

static unsigned long long fnv(const char *s) {
    unsigned long long h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void count(dev_t_ *d, int c) {
    if (d >= gpus && d < gpus + MAXGPU) calls[c][d - gpus]++;
    else if (d >= migs && d < migs + MAXGPU * MAXMIG) calls[c][MAXGPU + (d - migs)]++;
}

static void dump_calls(void) {
    const char *path = getenv("FAKE_NVML_CALLS");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    for (int c = 0; c < C_N; c++)
        for (int s = 0; s < NSLOT; s++) {
            if (!calls[c][s]) continue;
            if (s < MAXGPU) fprintf(f, "%s %d %llu\n", CALL_NAMES[c], s, calls[c][s]);
            else fprintf(f, "%s %d/%d %llu\n", CALL_NAMES[c], (s - MAXGPU) / MAXMIG, (s - MAXGPU) % MAXMIG,
                         calls[c][s]);
        }
    fclose(f);
}

static int field_index(const char *f) {
    for (int i = 0; i < F_N; i++)
        if (strcmp(f, FIELD_NAMES[i]) == 0) return i;
    return -1;
}

static void parse_refusals(const char *var, int code) {
    const char *v = getenv(var);
    if (!v) return;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        if (!colon) continue;
        *colon = 0;
        int f = field_index(colon + 1);
        if (f < 0) continue;
        for (int i = 0; i < ngpu; i++)
            if (strcmp(tok, "*") == 0 || atoi(tok) == i) gpus[i].refuse[f] = code;
    }
}

static void setup(void) {
    const char *v = getenv("FAKE_NVML_GPUS");
    ngpu = v ? atoi(v) : 2;
    if (ngpu < 0) ngpu = 0;
    if (ngpu > MAXGPU) ngpu = MAXGPU;
    if ((v = getenv("FAKE_NVML_NAME"))) snprintf(name, sizeof name, "%s", v);
    const char *seed = getenv("FAKE_NVML_SEED");
    if (!seed) seed = getenv("SLURMD_NODENAME");
    if (!seed) seed = "fake";
    unsigned long long h = fnv(seed);
    memset(gpus, 0, sizeof gpus);
    memset(nprocs, 0, sizeof nprocs);
    memset(calls, 0, sizeof calls);
    for (int i = 0; i < ngpu; i++) {
        dev_t_ *d = &gpus[i];
        d->index = i;
        d->lost_after = -1;
        d->mem_total = 40ULL << 30;
        snprintf(d->uuid, sizeof d->uuid, "GPU-%08llx-%04x-4%03x-8%03x-%012llx", h & 0xffffffffULL,
                 (unsigned)(h >> 32) & 0xffff, i & 0xfff, (unsigned)(h >> 48) & 0xfff,
                 (h * (i + 1)) & 0xffffffffffffULL);
        snprintf(d->bus, sizeof d->bus, "00000000:%02X:00.0", 0x07 + 0x10 * i);
    }
    parse_refusals("FAKE_NVML_UNSUPPORTED", NOT_SUPPORTED);
    parse_refusals("FAKE_NVML_NO_PERMISSION", NO_PERMISSION);
    if ((v = getenv("FAKE_NVML_LOST"))) {
        int i = atoi(v);
        const char *c = strchr(v, ':');
        if (i >= 0 && i < ngpu && c) gpus[i].lost_after = atol(c + 1);
    }
    if ((v = getenv("FAKE_NVML_MIG"))) {
        int i = atoi(v);
        const char *c = strchr(v, ':');
        int k = c ? atoi(c + 1) : 0;
        if (k > MAXMIG) k = MAXMIG;
        if (i >= 0 && i < ngpu) {
            gpus[i].mig_count = k;
            for (int j = 0; j < k; j++) {
                dev_t_ *m = &migs[i * MAXMIG + j];
                memset(m, 0, sizeof *m);
                m->index = i;
                m->is_mig = 1;
                m->gi = j + 1;
                m->ci = 0;
                m->parent = &gpus[i];
                m->lost_after = -1;
                m->mem_total = gpus[i].mem_total / (k ? k : 1);
                snprintf(m->uuid, sizeof m->uuid, "MIG-%08llx-%04x-4%03x-8%03x-%012llx", h & 0xffffffffULL,
                         j, i, j, (h * (j + 7)) & 0xffffffffffffULL);
                memcpy(m->refuse, gpus[i].refuse, sizeof m->refuse);
                m->refuse[F_UTIL] = NOT_SUPPORTED; /* NVML gives no utilisation for MIG instances */
                gpus[i].migs[j] = m;
            }
        }
    }
    if ((v = getenv("FAKE_NVML_PROCS"))) {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            unsigned int g, pid;
            unsigned long long mem;
            if (sscanf(tok, "%u:%u:%llu", &g, &pid, &mem) == 3 && (int)g < ngpu && nprocs[g] < MAXPROC) {
                procs[g][nprocs[g]].pid = pid;
                procs[g][nprocs[g]].usedGpuMemory = mem;
                procs[g][nprocs[g]].gpuInstanceId = 0xFFFFFFFFu;
                procs[g][nprocs[g]].computeInstanceId = 0xFFFFFFFFu;
                nprocs[g]++;
            }
        }
    }
}

static nvmlReturn_t check(dev_t_ *d, int field) {
    if (!inited) return UNINIT;
    if (!d) return INVALID_ARG;
    dev_t_ *root = d->is_mig ? d->parent : d;
    if (root->lost_after >= 0 && root->util_calls >= (unsigned long long)root->lost_after) return GPU_IS_LOST;
    if (field >= 0 && d->refuse[field]) return d->refuse[field];
    return OK;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    const char *v = getenv("FAKE_NVML_INIT");
    if (v && atoi(v)) return atoi(v);
    setup();
    inited++;
    return OK;
}
nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlShutdown(void) {
    if (!inited) return UNINIT;
    if (--inited == 0) dump_calls();
    return OK;
}

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case OK: return "Success";
    case UNINIT: return "Uninitialized";
    case INVALID_ARG: return "Invalid Argument";
    case NOT_SUPPORTED: return "Not Supported";
    case NO_PERMISSION: return "Insufficient Permissions";
    case INSUFFICIENT_SIZE: return "Insufficient Size";
    case 9: return "Driver Not Loaded";
    case GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    snprintf(version, length, "550.54.15-fake");
    return OK;
}
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
    snprintf(version, length, "12.550.54.15-fake");
    return OK;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { *v = 12040; return OK; }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 12040; return OK; }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!inited) return UNINIT;
    *count = ngpu;
    return OK;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, dev_t_ **h) {
    if (!inited) return UNINIT;
    if ((int)i >= ngpu) return INVALID_ARG;
    *h = &gpus[i];
    return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, dev_t_ **h) { return nvmlDeviceGetHandleByIndex_v2(i, h); }

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, dev_t_ **h) {
    for (int i = 0; i < ngpu; i++)
        if (strcmp(uuid, gpus[i].uuid) == 0) { *h = &gpus[i]; return OK; }
    return 6; /* NOT_FOUND */
}

nvmlReturn_t nvmlDeviceGetIndex(dev_t_ *d, unsigned int *i) { *i = d->index; return check(d, -1); }
nvmlReturn_t nvmlDeviceGetMinorNumber(dev_t_ *d, unsigned int *m) { *m = d->index; return check(d, -1); }

nvmlReturn_t nvmlDeviceGetName(dev_t_ *d, char *buf, unsigned int len) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    if (d->is_mig) snprintf(buf, len, "%s MIG 1g.5gb", name);
    else snprintf(buf, len, "%s", name);
    return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(dev_t_ *d, char *buf, unsigned int len) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    snprintf(buf, len, "%s", d->uuid);
    return OK;
}
nvmlReturn_t nvmlDeviceGetSerial(dev_t_ *d, char *buf, unsigned int len) {
    snprintf(buf, len, "%d", 1320000 + d->index);
    return check(d, -1);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(dev_t_ *d, pci_t *p) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    dev_t_ *root = d->is_mig ? d->parent : d;
    memset(p, 0, sizeof *p);
    snprintf(p->busId, sizeof p->busId, "%s", root->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%s", root->bus + 4);
    p->bus = 0x07 + 0x10 * root->index;
    p->pciDeviceId = 0x20b010de;
    return OK;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v2(dev_t_ *d, pci_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
nvmlReturn_t nvmlDeviceGetPciInfo(dev_t_ *d, pci_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }

nvmlReturn_t nvmlDeviceGetUtilizationRates(dev_t_ *d, util_t *u) {
    count(d, C_UTIL);
    if (d && !d->is_mig) d->util_calls++;
    nvmlReturn_t r = check(d, F_UTIL);
    if (r) return r;
    unsigned long long n = d->util_calls;
    u->gpu = (unsigned)((d->index * 7 + n * 13) % 101);
    u->memory = u->gpu / 2;
    return OK;
}

#define RESERVED (512ULL << 20)

static unsigned long long mem_used(dev_t_ *d) {
    unsigned long long n = (d->is_mig ? d->parent : d)->util_calls;
    return (d->mem_total / 100) * ((20 + d->index * 3 + n) % 90);
}

#ifdef NO_MEM_V2
#define V1_RESERVED 0ULL
#else
#define V1_RESERVED RESERVED
#endif

nvmlReturn_t nvmlDeviceGetMemoryInfo(dev_t_ *d, mem_t *m) {
    count(d, C_MEM);
    nvmlReturn_t r = check(d, F_MEM);
    if (r) return r;
    m->total = d->mem_total;
    m->used = mem_used(d) + V1_RESERVED;
    m->free = m->total - m->used;
    return OK;
}
#ifndef NO_MEM_V2
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(dev_t_ *d, mem2_t *m) {
    count(d, C_MEM_V2);
    nvmlReturn_t r = check(d, F_MEM);
    if (r) return r;
    m->total = d->mem_total;
    m->reserved = RESERVED;
    m->used = mem_used(d);
    m->free = m->total - m->used - m->reserved;
    return OK;
}
#endif

nvmlReturn_t nvmlDeviceGetTemperature(dev_t_ *d, int sensor, unsigned int *t) {
    count(d, C_TEMP);
    nvmlReturn_t r = check(d, F_TEMP);
    if (r) return r;
    if (sensor != 0) return NOT_SUPPORTED;
    *t = 40 + (unsigned)(((d->is_mig ? d->parent : d)->util_calls + d->index) % 30);
    return OK;
}
nvmlReturn_t nvmlDeviceGetTemperatureThreshold(dev_t_ *d, int th, unsigned int *t) {
    (void)th;
    *t = 90;
    return check(d, F_TEMP);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(dev_t_ *d, unsigned int *mw) {
    count(d, C_POWER);
    nvmlReturn_t r = check(d, F_POWER);
    if (r) return r;
    if (d->is_mig) return NOT_SUPPORTED;
    *mw = 60000 + (unsigned)((d->util_calls * 13 + d->index * 7) % 101) * 3000;
    return OK;
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(dev_t_ *d, unsigned int *mw) {
    count(d, C_LIMIT);
    nvmlReturn_t r = check(d, F_LIMIT);
    if (r) return r;
    *mw = 400000;
    return OK;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(dev_t_ *d, unsigned int *mw) {
    count(d, C_MGMT_LIMIT);
    nvmlReturn_t r = check(d, F_LIMIT);
    if (r) return r;
    *mw = 450000;
    return OK;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(dev_t_ *d, unsigned long long *mj) {
    count(d, C_ENERGY);
    nvmlReturn_t r = check(d, F_ENERGY);
    if (r) return r;
    *mj = 1000000ULL * (d->index + 1) + (d->is_mig ? d->parent : d)->util_calls * 250000ULL;
    return OK;
}

/* clock types: 0 graphics, 1 SM, 2 memory, 3 video */
nvmlReturn_t nvmlDeviceGetClockInfo(dev_t_ *d, int type, unsigned int *mhz) {
    if (type >= 0 && type <= 3) count(d, C_CLOCK_GRAPHICS + type);
    nvmlReturn_t r = check(d, F_CLOCK);
    if (r) return r;
    if (type < 0 || type > 3) return INVALID_ARG;
    static const unsigned int mhz_of[4] = {1100, 1410, 1215, 1095};
    *mhz = mhz_of[type];
    return OK;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(dev_t_ *d, int type, unsigned int *mhz) {
    nvmlReturn_t r = check(d, F_CLOCK);
    if (r) return r;
    if (type < 0 || type > 3) return INVALID_ARG;
    static const unsigned int mhz_of[4] = {1980, 1980, 1593, 1755};
    *mhz = mhz_of[type];
    return OK;
}

nvmlReturn_t nvmlDeviceGetFanSpeed(dev_t_ *d, unsigned int *s) { (void)s; return check(d, -1) ? check(d, -1) : NOT_SUPPORTED; }

static nvmlReturn_t get_procs(dev_t_ *d, unsigned int *count, procinfo_t *infos) {
    nvmlReturn_t r = check(d, F_PROCS);
    if (r) return r;
    int g = d->index, n = d->is_mig ? 0 : nprocs[g];
    if (n == 0) { *count = 0; return OK; }
    if (!infos || *count < (unsigned)n) { *count = n; return INSUFFICIENT_SIZE; }
    for (int i = 0; i < n; i++) infos[i] = procs[g][i];
    *count = n;
    return OK;
}
#ifndef NO_V3
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(dev_t_ *d, unsigned int *c, procinfo_t *p) {
    count(d, C_PROCS_V3);
    return get_procs(d, c, p);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(dev_t_ *d, unsigned int *c, procinfo_t *p) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    (void)p;
    *c = 0;
    return OK;
}
#endif
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(dev_t_ *d, unsigned int *c, procinfo_t *p) {
    count(d, C_PROCS_V2);
    return get_procs(d, c, p);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(dev_t_ *d, unsigned int *c, procinfo_t *p) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    (void)p;
    *c = 0;
    return OK;
}

nvmlReturn_t nvmlDeviceGetMigMode(dev_t_ *d, unsigned int *current, unsigned int *pending) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    if (d->is_mig || d->mig_count == 0) return NOT_SUPPORTED;
    *current = *pending = 1;
    return OK;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(dev_t_ *d, unsigned int *count) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    *count = d->mig_count;
    return OK;
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(dev_t_ *d, unsigned int j, dev_t_ **h) {
    nvmlReturn_t r = check(d, -1);
    if (r) return r;
    if ((int)j >= d->mig_count) return 6;
    *h = d->migs[j];
    return OK;
}
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(dev_t_ *d, unsigned int *is) { *is = d->is_mig; return OK; }
nvmlReturn_t nvmlDeviceGetGpuInstanceId(dev_t_ *d, unsigned int *id) {
    if (!d->is_mig) return NOT_SUPPORTED;
    *id = d->gi;
    return OK;
}
nvmlReturn_t nvmlDeviceGetComputeInstanceId(dev_t_ *d, unsigned int *id) {
    if (!d->is_mig) return NOT_SUPPORTED;
    *id = d->ci;
    return OK;
}
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(dev_t_ *d, dev_t_ **h) {
    if (!d->is_mig) return INVALID_ARG;
    *h = d->parent;
    return OK;
}
