package config

import (
	"container/heap"
	"sort"
)

// topoSort orders n nodes so that every node comes after the nodes deps
// returns for it; among nodes ready at the same time the lowest index
// (declaration order) goes first. Nodes on a cycle, and nodes that depend on
// one, cannot be ordered: they are left out of order, and every cycle
// (a strongly connected component with more than one node, or a node that
// depends on itself) is returned with its members in index order. The cost
// is O((n + edges) log n).
func topoSort(n int, deps func(int) []int) (order []int, cycles [][]int) {
	depList := make([][]int, n)
	dependents := make([][]int, n)
	indeg := make([]int, n)
	for i := 0; i < n; i++ {
		seen := map[int]bool{}
		for _, d := range deps(i) {
			if d < 0 || d >= n || seen[d] {
				continue
			}
			seen[d] = true
			depList[i] = append(depList[i], d)
			dependents[d] = append(dependents[d], i)
			indeg[i]++
		}
	}
	ready := &intHeap{}
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			*ready = append(*ready, i)
		}
	}
	heap.Init(ready)
	order = make([]int, 0, n)
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, i)
		for _, j := range dependents[i] {
			indeg[j]--
			if indeg[j] == 0 {
				heap.Push(ready, j)
			}
		}
	}
	if len(order) == n {
		return order, nil
	}
	// Tarjan's algorithm over the nodes left, iteratively so a long chain
	// cannot exhaust the stack.
	left := make([]bool, n)
	for i := range left {
		left[i] = true
	}
	for _, i := range order {
		left[i] = false
	}
	idx := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range idx {
		idx[i] = -1
	}
	var stack []int
	counter := 0
	type frame struct{ v, next int }
	for s := 0; s < n; s++ {
		if !left[s] || idx[s] >= 0 {
			continue
		}
		call := []frame{{v: s}}
		idx[s], low[s] = counter, counter
		counter++
		stack = append(stack, s)
		onStack[s] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.next < len(depList[f.v]) {
				w := depList[f.v][f.next]
				f.next++
				if !left[w] {
					continue
				}
				if idx[w] < 0 {
					idx[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w})
				} else if onStack[w] && idx[w] < low[f.v] {
					low[f.v] = idx[w]
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				if low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] != idx[v] {
				continue
			}
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 || selfLoop(depList[v], v) {
				sort.Ints(comp)
				cycles = append(cycles, comp)
			}
		}
	}
	sort.Slice(cycles, func(i, j int) bool { return cycles[i][0] < cycles[j][0] })
	return order, cycles
}

func selfLoop(deps []int, v int) bool {
	for _, d := range deps {
		if d == v {
			return true
		}
	}
	return false
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
