// Two functions of glibc newer than 2.34, defined here for mlt-portable so that the binary
// runs on glibc 2.34 (docs/install.md): the static libstdc++ and libgcc of Debian 12 call
// them because Debian 12's glibc (2.36) has them; glibc's own would set the floor to 2.36.
// A definition in the binary wins over glibc's at link time.
#include <dlfcn.h>
#include <link.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace {

// Fills `size` bytes from the kernel's random source, as glibc's arc4random_buf does; aborts
// where it cannot (glibc does too: there is no error to return).
void fill_random(void* buffer, size_t size) {
    auto* out = static_cast<unsigned char*>(buffer);
    while (size > 0) {
        const ssize_t n = getrandom(out, size, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            std::abort();
        }
        out += n;
        size -= static_cast<size_t>(n);
    }
}

struct FindObject {
    uintptr_t pc;
    dl_find_object* result;
};

// dl_iterate_phdr's callback: 1 (stop) when the object holds the searched pc in one of its
// loaded segments, having filled the result with its bounds and its PT_GNU_EH_FRAME.
int match_object(dl_phdr_info* info, size_t, void* data) {
    auto* find = static_cast<FindObject*>(data);
    uintptr_t start = UINTPTR_MAX, end = 0;
    const void* eh_frame = nullptr;
    bool holds = false;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
        const uintptr_t begin = info->dlpi_addr + phdr.p_vaddr;
        if (phdr.p_type == PT_GNU_EH_FRAME) eh_frame = reinterpret_cast<const void*>(begin);
        if (phdr.p_type != PT_LOAD) continue;
        if (begin < start) start = begin;
        if (begin + phdr.p_memsz > end) end = begin + phdr.p_memsz;
        if (find->pc >= begin && find->pc < begin + phdr.p_memsz) holds = true;
    }
    if (!holds) return 0;
    find->result->dlfo_flags = 0;
    find->result->dlfo_map_start = reinterpret_cast<void*>(start);
    find->result->dlfo_map_end = reinterpret_cast<void*>(end);
    find->result->dlfo_link_map = nullptr;
    find->result->dlfo_eh_frame = const_cast<void*>(eh_frame);
    return 1;
}

}  // namespace

extern "C" {

// glibc 2.36; std::random_device's default source in libstdc++ 12.
uint32_t arc4random() {
    uint32_t value = 0;
    fill_random(&value, sizeof value);
    return value;
}

// glibc 2.36; libarchive's archive_random().
void arc4random_buf(void* buffer, size_t size) {
    fill_random(buffer, size);
}

// glibc 2.35; libgcc's unwinder looks up the frame tables of a pc with it (every thrown
// exception). 0 when found, -1 when no loaded object holds pc, as glibc's.
int _dl_find_object(void* pc, dl_find_object* result) {
    FindObject find{reinterpret_cast<uintptr_t>(pc), result};
    return dl_iterate_phdr(match_object, &find) == 1 ? 0 : -1;
}

}  // extern "C"
