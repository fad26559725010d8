#include "common/error.hpp"

namespace tilesim {

void throw_input_error(const std::string& what) { throw InputError(what); }

}  // namespace tilesim
