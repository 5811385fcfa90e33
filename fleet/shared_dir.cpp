#include "fleet/shared_dir.hpp"

#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::fleet {

namespace fs = std::filesystem;

FileSystem file_system_of(const std::string& path) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return {"unknown", false};
  // statfs magic numbers (linux/magic.h and the file systems' own headers).
  static const std::map<unsigned long, FileSystem> known{
      {0x6969, {"nfs", true}},          {0xFF534D42, {"cifs", true}},     {0xFE534D42, {"smb2", true}},
      {0x517B, {"smb", true}},          {0x0BD00BD0, {"lustre", true}},   {0x47504653, {"gpfs", true}},
      {0x19830326, {"beegfs", true}},   {0x00C36400, {"ceph", true}},     {0x65735546, {"fuse", true}},
      {0x5346414F, {"afs", true}},      {0x7461636F, {"ocfs2", true}},    {0x01161970, {"gfs2", true}},
      {0x20030528, {"orangefs", true}}, {0x01021997, {"9p", true}},       {0x73757245, {"coda", true}},
      {0xEF53, {"ext4", false}},        {0x58465342, {"xfs", false}},     {0x9123683E, {"btrfs", false}},
      {0x01021994, {"tmpfs", false}},   {0x794C7630, {"overlay", false}}, {0x2FC12FC1, {"zfs", false}},
      {0x858458F6, {"ramfs", false}},   {0x4d44, {"vfat", false}},        {0x5346544E, {"ntfs", false}},
      {0xF2F52010, {"f2fs", false}},
  };
  const auto it = known.find(static_cast<unsigned long>(info.f_type));
  if (it != known.end()) return it->second;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(info.f_type));
  return {hex, false};
}

bool is_this_host(const std::string& node) {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return false;
  const std::string full = name;
  const std::string shortname = full.substr(0, full.find('.'));
  return node == full || node == shortname || node == "localhost";
}

void check_fleet_directory(const std::string& dir, const std::vector<std::string>& nodes,
                           bool assume_shared) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw UsageError("fleet directory '" + dir + "' is not writable: " + error.message());
  if (!fs::is_directory(dir)) throw UsageError("fleet directory '" + dir + "' is not a directory");
  const std::string probe = dir + "/.varex-write-probe." + std::to_string(::getpid());
  {
    std::ofstream out(probe);
    out << "probe\n";
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::remove(probe.c_str());
      throw UsageError("fleet directory '" + dir + "' is not writable: " + why);
    }
  }
  std::remove(probe.c_str());
  if (assume_shared) return;
  std::vector<std::string> others;
  for (const std::string& node : nodes) {
    if (!is_this_host(node)) others.push_back(node);
  }
  const FileSystem fsys = file_system_of(dir);
  if (fsys.network || others.empty()) return;
  if (others.size() > 4)
    others = {others[0], others[1], others[2], "… (" + std::to_string(others.size()) + " in all)"};
  throw UsageError("fleet directory '" + dir + "' is on this host's own file system (" + fsys.type +
                   "), which node " + join(others, ", ") +
                   " cannot see: give one on a shared file system (NFS, Lustre, GPFS, BeeGFS, CephFS), or "
                   "--assume-shared if the nodes mount it");
}

}  // namespace varex::fleet
