// A fresh directory under /tmp for one test, removed with everything in it
// when the object goes away.
//
//   TempDir dir("utilityd_cfg");
//   std::ofstream(dir.path() / "set.yaml") << text;
#ifndef UTILITYD_TESTS_TESTING_TEMP_DIR_H_
#define UTILITYD_TESTS_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace utilityd::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    // mkdtemp replaces the six trailing X's with a unique suffix.
    std::string name = "/tmp/" + prefix + "_" + std::string(6, 'X');
    path_ = ::mkdtemp(name.data()) != nullptr ? name : "";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_TEMP_DIR_H_
