/* libtinytc_sycl's private C functions, implemented in Python (src/tinytc_py/capi/sycl.py) and
 * not exported from the library. capi/build.py hands these declarations to cffi's embedding API;
 * tinytc_sycl.cpp includes them. backend: 0 OpenCL, 1 Level Zero. data is the C++ side's state of
 * the handler, which destroy frees when the handle goes away. */
tinytc_status_t _tinytc_sycl_recipe_handler_create(tinytc_recipe_handler_t *handler,
                                                   int32_t backend, void *context, void *device,
                                                   tinytc_recipe_t recipe, void *data,
                                                   void (*destroy)(void *));
tinytc_status_t _tinytc_sycl_recipe_handler_launch(tinytc_recipe_handler_t handler, void **data,
                                                   void **kernel, void **module,
                                                   int64_t *num_groups);
