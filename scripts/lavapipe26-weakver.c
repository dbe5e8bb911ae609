/* lavapipe26-weakver FILE VERSION: marks FILE's need of symbol version VERSION weak (VER_FLG_WEAK in
 * .gnu.version_r), so that the dynamic loader accepts a libc without it and resolves the symbols of
 * that version from whichever loaded object defines them (scripts/lavapipe26-shim.c).
 * A 64-bit little-endian ELF file, edited in place; exit status 1 if it needs no such version. */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char* file, const char* why) {
  fprintf(stderr, "lavapipe26-weakver: %s: %s\n", file, why);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lavapipe26-weakver FILE VERSION\n");
    return 2;
  }
  const char *file = argv[1], *version = argv[2];
  int fd = open(file, O_RDWR);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return fail(file, "cannot open");
  size_t size = (size_t)st.st_size;
  if (size < sizeof(Elf64_Ehdr)) return fail(file, "not an ELF file");
  unsigned char* image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (image == MAP_FAILED) return fail(file, "cannot map");
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)image;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
    return fail(file, "not a 64-bit little-endian ELF file");
  const Elf64_Shdr* sections = (const Elf64_Shdr*)(image + eh->e_shoff);

  int marked = 0;
  for (int i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr* sh = &sections[i];
    if (sh->sh_type != SHT_GNU_verneed) continue;
    const char* strings = (const char*)image + sections[sh->sh_link].sh_offset;
    Elf64_Off need = sh->sh_offset;
    for (Elf64_Word n = 0; n < sh->sh_info; ++n) {
      const Elf64_Verneed* vn = (const Elf64_Verneed*)(image + need);
      Elf64_Off aux = need + vn->vn_aux;
      for (Elf64_Half a = 0; a < vn->vn_cnt; ++a) {
        Elf64_Vernaux* va = (Elf64_Vernaux*)(image + aux);
        if (strcmp(strings + va->vna_name, version) == 0) {
          va->vna_flags |= VER_FLG_WEAK;
          printf("%s: %s of %s marked weak\n", file, version, strings + vn->vn_file);
          ++marked;
        }
        aux += va->vna_next;
      }
      need += vn->vn_next;
    }
  }
  munmap(image, size);
  close(fd);
  return marked ? 0 : fail(file, "needs no such version");
}
