// The inspector's page (server/ui/), built into the binary so it works
// offline and needs nothing installed beside utilityd.
#ifndef UTILITYD_SERVER_UI_ASSETS_H_
#define UTILITYD_SERVER_UI_ASSETS_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace utilityd::server {

// File name ("index.html", "app.js", ...) -> content.
const std::map<std::string, absl::string_view>& UiAssets();

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_UI_ASSETS_H_
