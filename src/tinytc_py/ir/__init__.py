"""The tensor-language IR: context, types, attributes, values, instructions, regions, functions."""
