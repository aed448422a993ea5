/* ci/git/git2_lib.h: libgit2 for gate's own code, opened on first use (base/lazylib.h).
 *
 * Include this instead of <git2.h>. Every libgit2 function gate calls is listed in
 * GIT2_FUNCS and, below the table, named by a macro that calls it through the table: the
 * code reads as plain libgit2. git2_lib_load() opens the library before the first call
 * (baseline_git_open and hook_where_find, before git_libgit2_init; gate --version); a call
 * before it is a NULL call. A function missing from the list is a link error of build/gate
 * (it is not linked with libgit2), never a run-time one.
 * With GATE_DIRECT_LIBS (make release: libgit2 linked statically) the names are libgit2's
 * own and git2_lib_load() does nothing. */
#ifndef GATE_CI_GIT_GIT2_LIB_H
#define GATE_CI_GIT_GIT2_LIB_H

#include <stddef.h>

#include <git2.h>

/* Opens libgit2 (once). Returns 0, or -1 with err naming the library, why, and the package. */
int git2_lib_load(char *err, size_t errlen);

#ifndef GATE_DIRECT_LIBS

#define GIT2_FUNCS(X)                                                                              \
	X(git_attr_get)                                                                            \
	X(git_attr_value)                                                                          \
	X(git_blob_create_from_buffer)                                                             \
	X(git_blob_free)                                                                           \
	X(git_blob_lookup)                                                                         \
	X(git_blob_rawcontent)                                                                     \
	X(git_blob_rawsize)                                                                        \
	X(git_buf_dispose)                                                                         \
	X(git_commit_create)                                                                       \
	X(git_commit_free)                                                                         \
	X(git_commit_id)                                                                           \
	X(git_commit_lookup)                                                                       \
	X(git_commit_parent)                                                                       \
	X(git_commit_parent_id)                                                                    \
	X(git_commit_parentcount)                                                                  \
	X(git_commit_tree)                                                                         \
	X(git_config_free)                                                                         \
	X(git_config_get_bool)                                                                     \
	X(git_config_get_path)                                                                     \
	X(git_config_get_string)                                                                   \
	X(git_diff_free)                                                                           \
	X(git_diff_get_delta)                                                                      \
	X(git_diff_num_deltas)                                                                     \
	X(git_diff_tree_to_tree)                                                                   \
	X(git_error_last)                                                                          \
	X(git_index_add)                                                                           \
	X(git_index_free)                                                                          \
	X(git_index_get_bypath)                                                                    \
	X(git_index_open)                                                                          \
	X(git_index_path)                                                                          \
	X(git_index_read)                                                                          \
	X(git_index_write)                                                                         \
	X(git_libgit2_init)                                                                        \
	X(git_libgit2_shutdown)                                                                    \
	X(git_libgit2_version)                                                                     \
	X(git_note_create)                                                                         \
	X(git_note_free)                                                                           \
	X(git_note_message)                                                                        \
	X(git_note_read)                                                                           \
	X(git_object_free)                                                                         \
	X(git_object_peel)                                                                         \
	X(git_odb_hashfile)                                                                        \
	X(git_oid_cpy)                                                                             \
	X(git_oid_equal)                                                                           \
	X(git_oid_fromstr)                                                                         \
	X(git_oid_tostr)                                                                           \
	X(git_reference_create_matching)                                                           \
	X(git_reference_free)                                                                      \
	X(git_reference_is_valid_name)                                                             \
	X(git_reference_lookup)                                                                    \
	X(git_reference_name)                                                                      \
	X(git_reference_name_to_id)                                                                \
	X(git_reference_shorthand)                                                                 \
	X(git_reference_target)                                                                    \
	X(git_repository_commondir)                                                                \
	X(git_repository_config_snapshot)                                                          \
	X(git_repository_free)                                                                     \
	X(git_repository_head)                                                                     \
	X(git_repository_head_detached)                                                            \
	X(git_repository_head_unborn)                                                              \
	X(git_repository_index)                                                                    \
	X(git_repository_is_shallow)                                                               \
	X(git_repository_item_path)                                                                \
	X(git_repository_open_ext)                                                                 \
	X(git_repository_path)                                                                     \
	X(git_repository_state)                                                                    \
	X(git_repository_workdir)                                                                  \
	X(git_revparse_single)                                                                     \
	X(git_signature_free)                                                                      \
	X(git_signature_now)                                                                       \
	X(git_status_byindex)                                                                      \
	X(git_status_file)                                                                         \
	X(git_status_list_entrycount)                                                              \
	X(git_status_list_free)                                                                    \
	X(git_status_list_new)                                                                     \
	X(git_status_options_init)                                                                 \
	X(git_tree_create_updated)                                                                 \
	X(git_tree_entry_bypath)                                                                   \
	X(git_tree_entry_filemode)                                                                 \
	X(git_tree_entry_free)                                                                     \
	X(git_tree_entry_id)                                                                       \
	X(git_tree_free)                                                                           \
	X(git_tree_lookup)

struct git2_api {
#define GIT2_MEMBER(f) __typeof__(f) *fn_##f;
	GIT2_FUNCS(GIT2_MEMBER)
#undef GIT2_MEMBER
};

extern struct git2_api git2_api;

#define git_attr_get (git2_api.fn_git_attr_get)
#define git_attr_value (git2_api.fn_git_attr_value)
#define git_blob_create_from_buffer (git2_api.fn_git_blob_create_from_buffer)
#define git_blob_free (git2_api.fn_git_blob_free)
#define git_blob_lookup (git2_api.fn_git_blob_lookup)
#define git_blob_rawcontent (git2_api.fn_git_blob_rawcontent)
#define git_blob_rawsize (git2_api.fn_git_blob_rawsize)
#define git_buf_dispose (git2_api.fn_git_buf_dispose)
#define git_commit_create (git2_api.fn_git_commit_create)
#define git_commit_free (git2_api.fn_git_commit_free)
#define git_commit_id (git2_api.fn_git_commit_id)
#define git_commit_lookup (git2_api.fn_git_commit_lookup)
#define git_commit_parent (git2_api.fn_git_commit_parent)
#define git_commit_parent_id (git2_api.fn_git_commit_parent_id)
#define git_commit_parentcount (git2_api.fn_git_commit_parentcount)
#define git_commit_tree (git2_api.fn_git_commit_tree)
#define git_config_free (git2_api.fn_git_config_free)
#define git_config_get_bool (git2_api.fn_git_config_get_bool)
#define git_config_get_path (git2_api.fn_git_config_get_path)
#define git_config_get_string (git2_api.fn_git_config_get_string)
#define git_diff_free (git2_api.fn_git_diff_free)
#define git_diff_get_delta (git2_api.fn_git_diff_get_delta)
#define git_diff_num_deltas (git2_api.fn_git_diff_num_deltas)
#define git_diff_tree_to_tree (git2_api.fn_git_diff_tree_to_tree)
#define git_error_last (git2_api.fn_git_error_last)
#define git_index_add (git2_api.fn_git_index_add)
#define git_index_free (git2_api.fn_git_index_free)
#define git_index_get_bypath (git2_api.fn_git_index_get_bypath)
#define git_index_open (git2_api.fn_git_index_open)
#define git_index_path (git2_api.fn_git_index_path)
#define git_index_read (git2_api.fn_git_index_read)
#define git_index_write (git2_api.fn_git_index_write)
#define git_libgit2_init (git2_api.fn_git_libgit2_init)
#define git_libgit2_shutdown (git2_api.fn_git_libgit2_shutdown)
#define git_libgit2_version (git2_api.fn_git_libgit2_version)
#define git_note_create (git2_api.fn_git_note_create)
#define git_note_free (git2_api.fn_git_note_free)
#define git_note_message (git2_api.fn_git_note_message)
#define git_note_read (git2_api.fn_git_note_read)
#define git_object_free (git2_api.fn_git_object_free)
#define git_object_peel (git2_api.fn_git_object_peel)
#define git_odb_hashfile (git2_api.fn_git_odb_hashfile)
#define git_oid_cpy (git2_api.fn_git_oid_cpy)
#define git_oid_equal (git2_api.fn_git_oid_equal)
#define git_oid_fromstr (git2_api.fn_git_oid_fromstr)
#define git_oid_tostr (git2_api.fn_git_oid_tostr)
#define git_reference_create_matching (git2_api.fn_git_reference_create_matching)
#define git_reference_free (git2_api.fn_git_reference_free)
#define git_reference_is_valid_name (git2_api.fn_git_reference_is_valid_name)
#define git_reference_lookup (git2_api.fn_git_reference_lookup)
#define git_reference_name (git2_api.fn_git_reference_name)
#define git_reference_name_to_id (git2_api.fn_git_reference_name_to_id)
#define git_reference_shorthand (git2_api.fn_git_reference_shorthand)
#define git_reference_target (git2_api.fn_git_reference_target)
#define git_repository_commondir (git2_api.fn_git_repository_commondir)
#define git_repository_config_snapshot (git2_api.fn_git_repository_config_snapshot)
#define git_repository_free (git2_api.fn_git_repository_free)
#define git_repository_head (git2_api.fn_git_repository_head)
#define git_repository_head_detached (git2_api.fn_git_repository_head_detached)
#define git_repository_head_unborn (git2_api.fn_git_repository_head_unborn)
#define git_repository_index (git2_api.fn_git_repository_index)
#define git_repository_is_shallow (git2_api.fn_git_repository_is_shallow)
#define git_repository_item_path (git2_api.fn_git_repository_item_path)
#define git_repository_open_ext (git2_api.fn_git_repository_open_ext)
#define git_repository_path (git2_api.fn_git_repository_path)
#define git_repository_state (git2_api.fn_git_repository_state)
#define git_repository_workdir (git2_api.fn_git_repository_workdir)
#define git_revparse_single (git2_api.fn_git_revparse_single)
#define git_signature_free (git2_api.fn_git_signature_free)
#define git_signature_now (git2_api.fn_git_signature_now)
#define git_status_byindex (git2_api.fn_git_status_byindex)
#define git_status_file (git2_api.fn_git_status_file)
#define git_status_list_entrycount (git2_api.fn_git_status_list_entrycount)
#define git_status_list_free (git2_api.fn_git_status_list_free)
#define git_status_list_new (git2_api.fn_git_status_list_new)
#define git_status_options_init (git2_api.fn_git_status_options_init)
#define git_tree_create_updated (git2_api.fn_git_tree_create_updated)
#define git_tree_entry_bypath (git2_api.fn_git_tree_entry_bypath)
#define git_tree_entry_filemode (git2_api.fn_git_tree_entry_filemode)
#define git_tree_entry_free (git2_api.fn_git_tree_entry_free)
#define git_tree_entry_id (git2_api.fn_git_tree_entry_id)
#define git_tree_free (git2_api.fn_git_tree_free)
#define git_tree_lookup (git2_api.fn_git_tree_lookup)

#endif /* GATE_DIRECT_LIBS */

#endif
