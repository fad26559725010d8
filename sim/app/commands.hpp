#pragma once
// The verbs of the `tilesim` binary. Each returns the process exit code.
#include <string>
#include <vector>

namespace tilesim::app {

int cmd_run(const std::vector<std::string>& args);
int cmd_trace(const std::vector<std::string>& args);
int cmd_replay(const std::vector<std::string>& args);
int cmd_l2_replay(const std::vector<std::string>& args);
int cmd_order(const std::vector<std::string>& args);
int cmd_order_search(const std::vector<std::string>& args);
int cmd_tune(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
int cmd_explore(const std::vector<std::string>& args);
int cmd_import(const std::vector<std::string>& args);
int cmd_policies(const std::vector<std::string>& args);

}  // namespace tilesim::app
