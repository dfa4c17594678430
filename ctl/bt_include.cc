#include "ctl/bt_include.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace utilityd::ctl {

using tinyxml2::XMLElement;

BtIncludes::BtIncludes(const std::string& main_file) {
  const std::string self =
      std::filesystem::path(main_file).lexically_normal().string();
  including_.push_back(self);
  read_.insert(self);
}

std::string BtIncludes::FileOf(const XMLElement* e) const {
  const auto it =
      e == nullptr ? file_of_.end() : file_of_.find(e->GetDocument());
  return it == file_of_.end() ? "" : it->second;
}

void BtIncludes::Expand(const XMLElement* root, const std::string& file,
                        std::vector<const XMLElement*>* out,
                        const Problem& problem) {
  for (const XMLElement* e = root->FirstChildElement(); e != nullptr;
       e = e->NextSiblingElement()) {
    if (std::string(e->Name()) == "include") {
      Include(e, file, out, problem);
    } else {
      out->push_back(e);
    }
  }
}

void BtIncludes::Include(const XMLElement* e, const std::string& from,
                         std::vector<const XMLElement*>* out,
                         const Problem& problem) {
  const char* path = e->Attribute("path");
  if (e->Attribute("ros_pkg") != nullptr) {
    problem(e,
            "<include ros_pkg>: a ROS package's path is not known here; "
            "include by path");
    return;
  }
  if (path == nullptr || *path == '\0') {
    problem(e, "<include> without a path");
    return;
  }
  std::filesystem::path file(path);
  if (file.is_relative()) {
    file = std::filesystem::path(from).parent_path() / file;
  }
  const std::string name = file.lexically_normal().string();
  const std::string what = absl::StrCat("<include path=\"", path, "\">: ");
  if (std::find(including_.begin(), including_.end(), name) !=
      including_.end()) {
    problem(e, absl::StrCat(what, "includes itself, through ",
                            absl::StrJoin(including_, " -> ")));
    return;
  }
  if (!read_.insert(name).second) return;  // read already
  Read(e, name, what, out, problem);
}

void BtIncludes::Register(const std::string& file,
                          std::vector<const XMLElement*>* out,
                          const Problem& problem) {
  const std::string name =
      std::filesystem::path(file).lexically_normal().string();
  if (!read_.insert(name).second) return;  // the main file, or given twice
  Read(nullptr, name, "", out, problem);
}

void BtIncludes::Read(const XMLElement* e, const std::string& name,
                      const std::string& what,
                      std::vector<const XMLElement*>* out,
                      const Problem& problem) {
  std::ifstream in(name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    problem(e, absl::StrCat(what, name, " cannot be read"));
    return;
  }
  auto doc = std::make_unique<tinyxml2::XMLDocument>();
  const std::string xml = text.str();
  if (doc->Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
    problem(e, absl::StrCat(what, name, ":", doc->ErrorLineNum(),
                            ": not well-formed XML: ", doc->ErrorStr()));
    return;
  }
  const XMLElement* root = doc->RootElement();
  file_of_[doc.get()] = name;
  documents_.push_back(std::move(doc));
  if (root == nullptr || std::string(root->Name()) != "root") {
    problem(
        e, absl::StrCat(what, name, ": the document's element must be <root>"));
    return;
  }
  including_.push_back(name);
  Expand(root, name, out, problem);
  including_.pop_back();
}

}  // namespace utilityd::ctl
