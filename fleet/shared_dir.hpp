#pragma once
// Whether a fleet directory can serve a run: writable here, and seen by every node the tasks may run on.
// Slurm cannot tell which file systems its nodes mount, so the second is judged from here: a directory on a
// network file system (NFS, Lustre, GPFS, BeeGFS, CephFS, SMB, AFS, …) is taken as shared; one on this
// host's own file system (ext4, xfs, tmpfs, overlay, …) only where every node of the partition is this host.
#include <string>
#include <vector>

namespace varex::fleet {

// The file system's type, as statfs names it ("nfs", "ext4", …, or "0x…" for one varex does not name), and
// whether varex takes it for one several hosts mount.
struct FileSystem {
  std::string type;
  bool network = false;
};
FileSystem file_system_of(const std::string& path);

// Creates `dir` where missing and checks that files can be written there and that `nodes` see it (unless
// `assume_shared`); UsageError of one line otherwise. Leaves nothing behind but the directory.
void check_fleet_directory(const std::string& dir, const std::vector<std::string>& nodes, bool assume_shared);

// Whether a Slurm node name is this host.
bool is_this_host(const std::string& node);

}  // namespace varex::fleet
