/* Private to jail/target.c, jail/mounts_sys.c and jail/mounts.c (in that
 * order, each calling only those before it): the jail's root. */
#ifndef WARDEN_MOUNTS_INT_H
#define WARDEN_MOUNTS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jail_impl.h"

#define OLDROOT "/oldroot"

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

/* The same structure as the kernel's struct mount_attr (uapi). */
struct wmount_attr { uint64_t attr_set, attr_clr, propagation, userns_fd; };

enum target_kind { TGT_DIR, TGT_FILE, TGT_HIDE };

/* target.c: the bottom layer */
int jm_walk_begin(struct werr *err);
void jm_walk_end(void);
bool jm_at_or_below(const char *path, const char *base);
void jm_forget_parent(void);
void jm_close_spent(void);
/* Reach path in the jail's tree following no link: TGT_DIR/TGT_FILE
 * create what is missing and refuse a link; TGT_HIDE returns a link itself
 * (to be covered).  An O_PATH fd. */
int jm_open_target(const char *path, enum target_kind want, struct werr *err);
int jm_place_tree(int tree, int target, const char *what, struct werr *err);
int jm_attach_tree(int tree, int target, bool ro, const char *what, struct werr *err);
int jm_tmpfs_at(int target, const char *path, uint64_t size, const char *mode, bool ro,
                struct werr *err);
int jm_copy_mask(const char *mask, int target, const char *path, struct werr *err);
int jm_seal_bind(const char *path, bool ro, struct werr *err);
int jm_mount_tmpfs(const char *path, uint64_t size, const char *mode, unsigned long extra,
                   struct werr *err);
int jm_bind_fd(int src, mode_t mode, const char *path, bool ro, struct werr *err);
void jm_retire(int fd);
void jm_placed(const char *path);
/* mounts_sys.c: what the jail's root holds besides the plan */
int jm_link_toplevel(struct werr *err);
int jm_write_identity(const struct jail_spec *spec, const struct wplan *plan, struct werr *err);
int jm_build_dev(struct werr *err);
int jm_build_proc(struct werr *err);
/* The first /proc mask of each kind (jm_build_proc), sealed: later masks
 * and hides are copies of it; "" while there is none. */
extern char jm_mask_file[64], jm_mask_dir[64];

#endif
