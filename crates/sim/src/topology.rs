//! Interconnect topologies between clusters (or dies): the directed links, the route a packet
//! takes, and how much of a collective each link carries.
//!
//! - `crossbar`: one shared resource; every transfer crosses it once.
//! - `ring`: k unidirectional links, cluster i to i+1 (REED's C2C ring); a packet from i to j
//!   crosses `(j - i) mod k` links.
//! - `mesh`: a dx x dy 2D mesh with a link in each direction between neighbours and XY
//!   routing, X first (CiFHER's NoP, cifher.md VI-A). Cluster c sits at (c mod dx, c / dx).

use crate::machine::Topology;

/// The links of a topology and its routes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Links {
    /// How clusters are connected.
    pub topology: Topology,
    /// Clusters connected.
    pub clusters: usize,
    /// Mesh width (clusters per row); unused otherwise.
    pub dx: usize,
    /// Directed links as (from, to); a crossbar has the one pseudo-link (0, 0). Node
    /// `clusters + d` is I/O die `d` ([`Links::with_io_dies`]).
    pub edges: Vec<(usize, usize)>,
    /// I/O dies beside a mesh (0: off-chip memory attaches to the clusters directly).
    pub io_dies: usize,
    /// The position of each link in `edges`: routes look every hop up here, so computing a
    /// collective costs its hops, not its hops times the links (which made a 428-cluster
    /// mesh take seconds to set up).
    index: std::collections::HashMap<(usize, usize), usize>,
}

impl Links {
    /// The links of `topology` over `clusters` (a mesh needs `dx` dividing `clusters`).
    pub fn new(topology: Topology, clusters: usize, dx: usize) -> Self {
        let k = clusters.max(1);
        let edges = match topology {
            Topology::Crossbar => vec![(0, 0)],
            Topology::Ring => (0..k).map(|i| (i, (i + 1) % k)).collect(),
            Topology::Mesh => {
                let dx = dx.max(1);
                let dy = k / dx;
                let mut e = Vec::new();
                for y in 0..dy {
                    for x in 0..dx {
                        let c = y * dx + x;
                        if x + 1 < dx {
                            e.push((c, c + 1));
                            e.push((c + 1, c));
                        }
                        if y + 1 < dy {
                            e.push((c, c + dx));
                            e.push((c + dx, c));
                        }
                    }
                }
                e
            }
        };
        let index = edges.iter().enumerate().map(|(i, &e)| (e, i)).collect();
        Self {
            topology,
            clusters: k,
            dx,
            edges,
            io_dies: 0,
            index,
        }
    }

    /// This mesh with `io_dies` I/O dies (at most 2) beside it, through which off-chip memory
    /// reaches the clusters (cifher.md VI-A: HBM traffic enters "through edges connecting the
    /// I/O die and its adjacent cores"). Die 0 sits west of column 0 and die 1 east of the
    /// last column; each has a link each way to every cluster of its column. Other
    /// topologies are returned unchanged.
    pub fn with_io_dies(mut self, io_dies: usize) -> Self {
        if self.topology != Topology::Mesh || io_dies == 0 {
            return self;
        }
        let dx = self.dx.max(1);
        let dy = self.clusters / dx;
        for d in 0..io_dies.min(2) {
            let io = self.clusters + d;
            let x = if d == 0 { 0 } else { dx - 1 };
            for y in 0..dy {
                for e in [(io, y * dx + x), (y * dx + x, io)] {
                    self.index.insert(e, self.edges.len());
                    self.edges.push(e);
                }
            }
        }
        self.io_dies = io_dies.min(2);
        self
    }

    /// Number of link resources.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// Whether there are none (a single-cluster mesh).
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    fn edge(&self, a: usize, b: usize) -> usize {
        *self.index.get(&(a, b)).expect("routes use existing links")
    }

    /// The links a packet from `src` to `dst` crosses, in order. An I/O die (node
    /// `clusters + d`) enters or leaves the mesh on the destination's (source's) row, then
    /// the packet follows XY routing.
    pub fn route(&self, src: usize, dst: usize) -> Vec<usize> {
        if src == dst {
            return Vec::new();
        }
        let k = self.clusters;
        let dx = self.dx.max(1);
        let side = |io: usize| if io == k { 0 } else { dx - 1 };
        if src >= k {
            let entry = (dst / dx) * dx + side(src);
            let mut out = vec![self.edge(src, entry)];
            out.extend(self.route(entry, dst));
            return out;
        }
        if dst >= k {
            let exit = (src / dx) * dx + side(dst);
            let mut out = self.route(src, exit);
            out.push(self.edge(exit, dst));
            return out;
        }
        match self.topology {
            Topology::Crossbar => vec![0],
            Topology::Ring => {
                let k = self.clusters;
                let mut out = Vec::new();
                let mut c = src;
                while c != dst {
                    out.push(c);
                    c = (c + 1) % k;
                }
                out
            }
            Topology::Mesh => {
                let dx = self.dx.max(1);
                let (mut x, mut y) = (src % dx, src / dx);
                let (tx, ty) = (dst % dx, dst / dx);
                let mut out = Vec::new();
                while x != tx {
                    let nx = if tx > x { x + 1 } else { x - 1 };
                    out.push(self.edge(y * dx + x, y * dx + nx));
                    x = nx;
                }
                while y != ty {
                    let ny = if ty > y { y + 1 } else { y - 1 };
                    out.push(self.edge(y * dx + x, ny * dx + x));
                    y = ny;
                }
                out
            }
        }
    }

    /// Bytes on each link when every cluster sends `per_pair` bytes to every other (an
    /// all-to-all re-distribution).
    pub fn all_to_all(&self, per_pair: f64) -> Vec<f64> {
        self.all_to_all_in(&[(0..self.clusters).collect()], per_pair)
    }

    /// Bytes on each link when cluster `src` multicasts `bytes` to every other cluster along
    /// its routes (a link shared by several routes carries the data once).
    pub fn broadcast(&self, src: usize, bytes: f64) -> Vec<f64> {
        let all: Vec<usize> = (0..self.clusters).collect();
        self.multicast(src, &all, bytes)
    }

    /// Bytes on each link when every cluster multicasts its `per_cluster` bytes to every
    /// other (an all-gather).
    pub fn all_gather(&self, per_cluster: f64) -> Vec<f64> {
        self.all_gather_in(&[(0..self.clusters).collect()], per_cluster)
    }
}

/// Collectives inside groups of clusters (CiFHER's limb and coefficient clusters), all
/// groups at once.
impl Links {
    /// The blocks of a `rows x cols` block clustering of the mesh (cifher.md IV-C), each
    /// listed in row-major order inside the block, so that the i-th members of all blocks
    /// form coefficient cluster i ([`Links::coefficient_clusters`]).
    pub fn blocks(&self, rows: usize, cols: usize) -> Vec<Vec<usize>> {
        let dx = self.dx.max(1);
        let dy = self.clusters / dx;
        let (rows, cols) = (rows.clamp(1, dy.max(1)), cols.clamp(1, dx));
        let mut out = Vec::new();
        for by in 0..dy / rows {
            for bx in 0..dx / cols {
                out.push(
                    (0..rows)
                        .flat_map(|r| (0..cols).map(move |c| (by * rows + r) * dx + bx * cols + c))
                        .collect(),
                );
            }
        }
        out
    }

    /// The coefficient clusters of a block clustering: the cores at the same place in every
    /// block.
    pub fn coefficient_clusters(blocks: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let size = blocks.first().map_or(0, |b| b.len());
        (0..size)
            .map(|i| blocks.iter().map(|b| b[i]).collect())
            .collect()
    }

    /// Bytes on each link when, in every group, every member sends `per_pair` bytes to every
    /// other member.
    pub fn all_to_all_in(&self, groups: &[Vec<usize>], per_pair: f64) -> Vec<f64> {
        let mut load = vec![0.0; self.len()];
        for g in groups {
            for &s in g {
                for &d in g {
                    for l in self.route(s, d) {
                        load[l] += per_pair;
                    }
                }
            }
        }
        load
    }

    /// Bytes on each link when `src` multicasts `bytes` to the other members of `group`
    /// (a link shared by several routes carries the data once).
    pub fn multicast(&self, src: usize, group: &[usize], bytes: f64) -> Vec<f64> {
        let mut used = vec![false; self.len()];
        for &d in group {
            for l in self.route(src, d) {
                used[l] = true;
            }
        }
        used.iter().map(|&u| if u { bytes } else { 0.0 }).collect()
    }

    /// Bytes on each link when, in every group, every member multicasts `per_member` bytes
    /// to the others (all-gathers inside the groups).
    pub fn all_gather_in(&self, groups: &[Vec<usize>], per_member: f64) -> Vec<f64> {
        let mut load = vec![0.0; self.len()];
        for g in groups {
            for &s in g {
                for (l, b) in self.multicast(s, g, per_member).into_iter().enumerate() {
                    load[l] += b;
                }
            }
        }
        load
    }
}

impl Links {
    /// Directed links into cluster `v`.
    fn links_into(&self, v: usize) -> Vec<usize> {
        (0..self.len())
            .filter(|&l| self.edges[l].1 == v && self.edges[l].0 < self.clusters)
            .collect()
    }

    /// Link bytes per byte moved between off-chip memory and cluster `c` through the I/O
    /// dies, the bytes split evenly over the dies (the stacks interleave every object):
    /// `(link, bytes per byte)`, inbound (memory to cluster) or outbound. Empty without I/O
    /// dies.
    pub fn io_path(&self, c: usize, inbound: bool) -> Vec<(usize, f64)> {
        let share = 1.0 / self.io_dies.max(1) as f64;
        (0..self.io_dies)
            .flat_map(|d| {
                let io = self.clusters + d;
                let r = if inbound {
                    self.route(io, c)
                } else {
                    self.route(c, io)
                };
                r.into_iter().map(move |l| (l, share))
            })
            .collect()
    }

    /// A hop-by-hop all-gather: in each hop every directed link carries at most one block
    /// (conflict-free) from a cluster that holds it to one that lacks it; blocks that only
    /// one neighbour can supply go first, then rarer blocks. Returns, per hop, the
    /// (link, block) transfers. On a 4 x 4 mesh it finishes in 8 hops, the bound set by a
    /// corner's two incoming links and 15 missing blocks (h3.md 4.2's conflict-free 8-hop
    /// broadcast).
    pub fn all_gather_schedule(&self) -> Vec<Vec<(usize, usize)>> {
        let k = self.clusters;
        let mut have: Vec<Vec<bool>> = (0..k).map(|i| (0..k).map(|b| b == i).collect()).collect();
        let mut hops = Vec::new();
        let ins: Vec<Vec<usize>> = (0..k).map(|v| self.links_into(v)).collect();
        while have.iter().any(|h| h.iter().any(|x| !x)) && hops.len() < 4 * k {
            let count: Vec<usize> = (0..k)
                .map(|b| have.iter().filter(|h| h[b]).count())
                .collect();
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by_key(|&v| (have[v].iter().filter(|x| **x).count(), ins[v].len(), v));
            let mut hop = Vec::new();
            let mut got = vec![vec![false; k]; k];
            for &v in &order {
                let mut links = ins[v].clone();
                let missing = |u: usize| (0..k).filter(|&b| have[u][b] && !have[v][b]).count();
                links.sort_by_key(|&l| (missing(self.edges[l].0), l));
                for l in links {
                    let u = self.edges[l].0;
                    let best = (0..k)
                        .filter(|&b| have[u][b] && !have[v][b] && !got[v][b])
                        .min_by_key(|&b| {
                            let suppliers =
                                ins[v].iter().filter(|&&i| have[self.edges[i].0][b]).count();
                            (suppliers, count[b], b)
                        });
                    if let Some(b) = best {
                        got[v][b] = true;
                        hop.push((l, b));
                    }
                }
            }
            if hop.is_empty() {
                break;
            }
            for &(l, b) in &hop {
                have[self.edges[l].1][b] = true;
            }
            hops.push(hop);
        }
        hops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_routes_go_one_way() {
        let r = Links::new(Topology::Ring, 4, 0);
        assert_eq!(r.len(), 4);
        assert_eq!(r.route(0, 3), vec![0, 1, 2]);
        assert_eq!(r.route(3, 1), vec![3, 0]);
        // All-to-all of 1 byte per pair: each link carries 1 + 2 + 3 = 6 pair-hops / ...
        // by symmetry every link carries the same: total hops 4 * (1 + 2 + 3) = 24 over 4.
        assert_eq!(r.all_to_all(1.0), vec![6.0; 4]);
        // All-gather of 1 byte per cluster: every link carries 3 (k - 1) bytes.
        assert_eq!(r.all_gather(1.0), vec![3.0; 4]);
    }

    #[test]
    fn mesh_routes_are_xy() {
        // 4 x 2 mesh: cluster 0 at (0,0), 7 at (3,1).
        let m = Links::new(Topology::Mesh, 8, 4);
        assert_eq!(m.len(), 2 * 3 * 2 + 2 * 4);
        let r = m.route(0, 7);
        let hops: Vec<(usize, usize)> = r.iter().map(|&l| m.edges[l]).collect();
        assert_eq!(
            hops,
            vec![(0, 1), (1, 2), (2, 3), (3, 7)],
            "X first, then Y"
        );
        // 2 x 2 all-to-all, one byte per pair: each of the 8 directed links carries 2
        // (one straight pair and one pair whose X leg or Y leg uses it).
        let m2 = Links::new(Topology::Mesh, 4, 2);
        assert_eq!(m2.all_to_all(1.0), vec![2.0; 8]);
        // Broadcast from a corner of a 2 x 2 mesh: a tree of 3 links.
        let b = m2.broadcast(0, 5.0);
        assert_eq!(b.iter().filter(|&&x| x > 0.0).count(), 3);
        assert_eq!(b.iter().sum::<f64>(), 15.0);
    }

    /// cifher.md VI-A: HBM traffic enters the mesh through I/O-die edges. On a 4 x 2 mesh
    /// the west die (node 8) links to clusters 0 and 4, the east die (node 9) to 3 and 7; a
    /// load enters on the destination's row and goes X from there, and half of every
    /// transfer goes through each die.
    #[test]
    fn io_dies_enter_on_the_destinations_row() {
        let m = Links::new(Topology::Mesh, 8, 4).with_io_dies(2);
        assert_eq!(m.len(), 2 * 3 * 2 + 2 * 4 + 2 * 2 * 2);
        let hops = |r: Vec<usize>| r.iter().map(|&l| m.edges[l]).collect::<Vec<_>>();
        assert_eq!(hops(m.route(8, 6)), vec![(8, 4), (4, 5), (5, 6)]);
        assert_eq!(hops(m.route(9, 6)), vec![(9, 7), (7, 6)]);
        assert_eq!(hops(m.route(1, 9)), vec![(1, 2), (2, 3), (3, 9)]);
        let p = m.io_path(6, true);
        assert_eq!(p.len(), 5);
        assert!(p.iter().all(|&(_, share)| share == 0.5));
        // Cluster-to-cluster routes and collectives ignore the dies.
        assert_eq!(m.route(0, 7), Links::new(Topology::Mesh, 8, 4).route(0, 7));
        assert!(m.all_to_all(1.0)[20..].iter().all(|&x| x == 0.0));
        // Without I/O dies, or on a ring, nothing changes.
        assert!(Links::new(Topology::Mesh, 8, 4).io_path(6, true).is_empty());
        assert_eq!(Links::new(Topology::Ring, 4, 0).with_io_dies(2).len(), 4);
    }

    /// cifher.md IV-C, 4x4-BK-2x2: four 2 x 2 blocks; the coefficient clusters take one core
    /// from each. An all-to-all inside the blocks never leaves a block; one inside the
    /// coefficient clusters crosses blocks.
    #[test]
    fn block_clustering_groups_and_their_collectives() {
        let m = Links::new(Topology::Mesh, 16, 4);
        let blocks = m.blocks(2, 2);
        assert_eq!(
            blocks,
            vec![
                vec![0, 1, 4, 5],
                vec![2, 3, 6, 7],
                vec![8, 9, 12, 13],
                vec![10, 11, 14, 15]
            ]
        );
        let coeff = Links::coefficient_clusters(&blocks);
        assert_eq!(coeff[0], vec![0, 2, 8, 10]);
        assert_eq!(coeff[3], vec![5, 7, 13, 15]);
        let block_of = |c: usize| blocks.iter().position(|b| b.contains(&c)).unwrap();
        let inside = m.all_to_all_in(&blocks, 1.0);
        for (l, &x) in inside.iter().enumerate() {
            let (a, b) = m.edges[l];
            if block_of(a) != block_of(b) {
                assert_eq!(x, 0.0, "link {a}->{b} crosses blocks");
            }
        }
        // Each 2 x 2 block: 8 directed links carrying 2 pair-hops each (as a 2 x 2 mesh).
        assert_eq!(inside.iter().sum::<f64>(), 4.0 * 8.0 * 2.0);
        let across = m.all_to_all_in(&coeff, 1.0);
        assert!(across
            .iter()
            .enumerate()
            .any(|(l, &x)| x > 0.0 && block_of(m.edges[l].0) != block_of(m.edges[l].1)));
        // The whole machine as one group is the plain all-to-all and all-gather.
        let all: Vec<usize> = (0..16).collect();
        assert_eq!(
            m.all_to_all_in(std::slice::from_ref(&all), 1.0),
            m.all_to_all(1.0)
        );
        assert_eq!(m.all_gather_in(&[all], 1.0), m.all_gather(1.0));
        // Dimension-wise clustering on 8 x 8 is 8x8-BK-8x1: columns.
        let m8 = Links::new(Topology::Mesh, 64, 8);
        let cols = m8.blocks(8, 1);
        assert_eq!(cols.len(), 8);
        assert_eq!(cols[1], (0..8).map(|y| y * 8 + 1).collect::<Vec<_>>());
    }

    /// h3.md 4.2: on 4 x 4 tiles the broadcast of every tile's block to every tile finishes
    /// in 8 hops with no link carrying two blocks in a hop.
    #[test]
    fn mesh_all_gather_takes_eight_conflict_free_hops_on_4x4() {
        let m = Links::new(Topology::Mesh, 16, 4);
        let hops = m.all_gather_schedule();
        assert_eq!(hops.len(), 8);
        let mut have: Vec<Vec<bool>> = (0..16).map(|i| (0..16).map(|b| b == i).collect()).collect();
        for hop in &hops {
            let mut used = vec![false; m.len()];
            for &(l, b) in hop {
                assert!(!used[l], "link {l} carries two blocks in one hop");
                used[l] = true;
                assert!(have[m.edges[l].0][b], "the sender holds the block");
            }
            for &(l, b) in hop {
                have[m.edges[l].1][b] = true;
            }
        }
        assert!(
            have.iter().all(|h| h.iter().all(|x| *x)),
            "everyone has everything"
        );
        // 2 x 2: 3 missing blocks over 2 incoming links: 2 hops.
        assert_eq!(
            Links::new(Topology::Mesh, 4, 2).all_gather_schedule().len(),
            2
        );
    }

    #[test]
    fn crossbar_is_one_resource() {
        let c = Links::new(Topology::Crossbar, 4, 0);
        assert_eq!(c.len(), 1);
        assert_eq!(c.route(1, 2), vec![0]);
        assert_eq!(c.all_to_all(1.0), vec![12.0]);
    }
}
