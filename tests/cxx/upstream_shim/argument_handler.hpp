/** @file
 * @brief Same as cl/argument_handler.hpp (upstream's OpenCL test runtime includes both names).
 */
#include "cl/argument_handler.hpp"
