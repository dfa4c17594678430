// BehaviorTree.CPP's <include path="..."/>: the files an imported document
// includes, read and held while the import uses their elements
// (docs/TREES.md, "Included files"). Internal to ctl/.
//
//   BtIncludes includes("patrol.xml");
//   std::vector<const tinyxml2::XMLElement*> top;
//   includes.Expand(doc.RootElement(), "patrol.xml", &top, on_problem);
//   // top: <root>'s children, each <include> replaced by its file's
#ifndef UTILITYD_CTL_BT_INCLUDE_H_
#define UTILITYD_CTL_BT_INCLUDE_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tinyxml2.h"

namespace utilityd::ctl {

class BtIncludes {
 public:
  // Hears of an <include> that cannot be followed, and why.
  using Problem =
      std::function<void(const tinyxml2::XMLElement*, std::string why)>;

  // `main_file`: the file imported (its own includes of itself are cycles).
  explicit BtIncludes(const std::string& main_file);

  // Appends the children of `root` (read from `file`) to `out` in order,
  // each <include> replaced by the children of its file's <root>: the path
  // relative to the including file, includes nested, each file read once.
  // A ROS package's include, a file that cannot be read or parsed, a root
  // that is not <root> and a file including itself go to `problem`.
  void Expand(const tinyxml2::XMLElement* root, const std::string& file,
              std::vector<const tinyxml2::XMLElement*>* out,
              const Problem& problem);

  // Appends the children of `file`'s <root> to `out`, expanded as Expand
  // does, as if the main file included it: BT.CPP's factory registering
  // several files. Its problems go to `problem` with no element, their
  // text naming the file.
  void Register(const std::string& file,
                std::vector<const tinyxml2::XMLElement*>* out,
                const Problem& problem);

  // The file an element was read from: "" for the main file's elements.
  std::string FileOf(const tinyxml2::XMLElement* e) const;

 private:
  void Include(const tinyxml2::XMLElement* e, const std::string& from,
               std::vector<const tinyxml2::XMLElement*>* out,
               const Problem& problem);
  // Reads file `name` (normalised) and expands its <root> into `out`;
  // `e` is the <include> that names it (null for a file registered),
  // `what` the text its problems start with.
  void Read(const tinyxml2::XMLElement* e, const std::string& name,
            const std::string& what,
            std::vector<const tinyxml2::XMLElement*>* out,
            const Problem& problem);

  std::vector<std::unique_ptr<tinyxml2::XMLDocument>> documents_;
  std::map<const tinyxml2::XMLDocument*, std::string> file_of_;
  std::vector<std::string> including_;  // the chain being read
  std::set<std::string> read_;          // every file read
};

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_BT_INCLUDE_H_
