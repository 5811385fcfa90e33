#include "results/sqlite.hpp"

#include <unistd.h>

#include <cctype>
#include <cstring>
#include <filesystem>

#include "base/errors.hpp"

namespace varex::results {

namespace {

// `path` as a file: URI (RFC 3986 percent-encoding of what a URI's path cannot hold as is).
std::string file_uri(const std::string& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  std::string out = "file:";
  for (const char c : absolute) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || std::strchr("/-._~", c)) {
      out += c;
    } else {
      static const char* hex = "0123456789ABCDEF";
      out += std::string("%") + hex[u >> 4] + hex[u & 15];
    }
  }
  return out;
}

// A database in a directory this process cannot write (a read-only mount, or another user's results)
// cannot have its WAL index (-shm) created there, and SQLite then refuses even to read a WAL database. With
// no -wal file beside it every committed transaction is in the file itself, which SQLite's immutable mode
// reads without locks or journal files: nothing can change the file meanwhile, since nobody may write there.
bool read_as_immutable(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::absolute(path).parent_path();
  return ::access(parent.c_str(), W_OK) != 0 && !std::filesystem::exists(path + "-wal");
}

}  // namespace

Database::Database(const std::string& path, Mode mode) : path_(path) {
  if (mode != Mode::Create && !std::filesystem::exists(path)) {
    throw UsageError("database '" + path + "' does not exist");
  }
  const bool immutable = mode == Mode::ReadOnly && read_as_immutable(path);
  const int flags = (mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
                    (mode == Mode::Create ? SQLITE_OPEN_CREATE : 0) | (immutable ? SQLITE_OPEN_URI : 0) |
                    SQLITE_OPEN_FULLMUTEX;
  const std::string name = immutable ? file_uri(path) + "?immutable=1" : path;
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw UsageError("cannot open database '" + path + "': " + why);
  }
  sqlite3_busy_timeout(db_, 30000);  // several processes may write one file
  sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() {
  sqlite3_close(db_);
}

void Database::exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : "unknown error";
    sqlite3_free(error);
    throw RuntimeError("database '" + path_ + "': " + why);
  }
}

Statement::Statement(Database& db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    throw RuntimeError("database '" + db.path() + "': " + sqlite3_errmsg(db.handle()) +
                       " in: " + sql.substr(0, 200));
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, const std::string& value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw RuntimeError("database '" + db_.path() + "': " + sqlite3_errmsg(db_.handle()));
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, column))
           : std::string();
}

Transaction::Transaction(Database& db) : db_(db) {
  db_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace varex::results
