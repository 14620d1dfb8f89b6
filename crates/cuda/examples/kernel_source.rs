//! Prints the kernels' CUDA C translation unit ([`tessera_cuda::kernel_source`]) for tools that
//! compile it without a GPU: the first line is `// kernels:` and the kernel names, the rest the
//! source. `cargo run -q -p tessera-cuda --example kernel_source > tessera.cu`
fn main() {
    let (source, names) = tessera_cuda::kernel_source();
    println!("// kernels: {}", names.join(" "));
    print!("{source}");
}
